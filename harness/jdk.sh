# Sourced by ./thallus and the benchmark scripts: finds the JDK 25 the project runs on.

# Prints the home of the first JDK >= 25 found: JAVA_HOME, the java on PATH, then the usual install places.
find_jdk() {
  local candidates=()
  [[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
  fi
  local dir
  for dir in /usr/lib/jvm/* "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/* /opt/java/* /opt/jdk* \
      /Library/Java/JavaVirtualMachines/*/Contents/Home; do
    [[ -d "$dir" ]] && candidates+=("$dir")
  done
  for dir in "${candidates[@]}"; do
    [[ -x "$dir/bin/java" && -f "$dir/release" ]] || continue
    local version
    version="$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$dir/release")"
    if [[ -n "$version" && "$version" -ge 25 ]]; then
      echo "$dir"
      return 0
    fi
  done
  return 1
}
