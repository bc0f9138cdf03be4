package io.thallus.rdma.verbs;

import io.thallus.StatusCode;
import io.thallus.ThallusException;

/** Names for work completion statuses, and the errors they become. */
final class WorkCompletions {
  private WorkCompletions() {}

  static final int REMOTE_ACCESS_ERROR = 10;
  static final int RETRY_EXCEEDED = 12;
  static final int FLUSHED = 5;

  static String name(int status) {
    return switch (status) {
      case 0 -> "SUCCESS";
      case 1 -> "LOC_LEN_ERR";
      case 2 -> "LOC_QP_OP_ERR";
      case 3 -> "LOC_EEC_OP_ERR";
      case 6 -> "MW_BIND_ERR (the window could not be bound to that range)";
      case 4 -> "LOC_PROT_ERR (a local buffer is not registered or its key is wrong)";
      case FLUSHED -> "WR_FLUSH_ERR (the queue pair failed earlier)";
      case 9 -> "REM_INV_REQ_ERR (the peer refused the request: e.g. a message longer than its receive buffer)";
      case REMOTE_ACCESS_ERROR -> "REM_ACCESS_ERR (the remote key or range is not registered for this remote read or write)";
      case 11 -> "REM_OP_ERR";
      case RETRY_EXCEEDED -> "RETRY_EXC_ERR (the peer stopped answering)";
      case 13 -> "RNR_RETRY_EXC_ERR (the peer had no receive posted)";
      default -> "status " + status;
    };
  }

  static ThallusException failure(int status, String what) {
    StatusCode code = switch (status) {
      case REMOTE_ACCESS_ERROR, 4 -> StatusCode.PERMISSION_DENIED;
      case RETRY_EXCEEDED, 13, FLUSHED -> StatusCode.UNAVAILABLE;
      default -> StatusCode.INTERNAL;
    };
    return ThallusException.of(code, what + " failed: " + name(status));
  }
}
