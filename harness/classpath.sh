# Sourced by the guest benchmark scripts: builds the harness module (and what it needs) on the host and prints its
# class path, for the programs the scripts run inside the Soft-RoCE guests.
harness_classpath() {
  local root=$1 cp_file
  cp_file="$(mktemp)"
  # Not offline: on a fresh machine the dependency plugin itself is not in the local repository yet.
  (cd "$root" && ./mvnw -q -pl harness -am install -DskipTests >"$cp_file.log" 2>&1 \
    && ./mvnw -q -pl harness dependency:build-classpath -Dmdep.outputFile="$cp_file" >>"$cp_file.log" 2>&1) \
    || { cat "$cp_file.log" >&2; rm -f "$cp_file" "$cp_file.log"; return 1; }
  echo "$root/harness/target/classes:$(cat "$cp_file")"
  rm -f "$cp_file" "$cp_file.log"
}
