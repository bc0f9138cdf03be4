package io.thallus.internal.transport;

/** Names of the Linux errno values the native transports report (cma's process_vm_readv, rdma's verbs). */
public final class Errno {
  private Errno() {}

  /** The symbolic name, with a short gloss where the name alone is cryptic; {@code "errno N"} for the rest. */
  public static String name(int errno) {
    return switch (errno) {
      case 0 -> "no error reported";
      case 1 -> "EPERM (not permitted)";
      case 2 -> "ENOENT";
      case 3 -> "ESRCH (no such process)";
      case 11 -> "EAGAIN";
      case 12 -> "ENOMEM";
      case 13 -> "EACCES";
      case 14 -> "EFAULT (bad address)";
      case 16 -> "EBUSY";
      case 19 -> "ENODEV";
      case 22 -> "EINVAL";
      case 95 -> "EOPNOTSUPP";
      case 110 -> "ETIMEDOUT";
      default -> "errno " + errno;
    };
  }
}
