# Where the JVM's crash logs (hs_err_pid*.log: command line, registers, memory map) go: a folder only this user can
# open, never the working directory, which for thallus serve is its data root, where clients' SQL reads files.
# THALLUS_CRASH_DIR overrides the place; the default is the user's state folder.
crash_folder() {
  local folder="${THALLUS_CRASH_DIR:-${XDG_STATE_HOME:-${HOME:-/tmp}/.local/state}/thallus/crashes}"
  (umask 077 && mkdir -p "$folder") && chmod 700 "$folder"
  printf '%s\n' "$folder"
}
