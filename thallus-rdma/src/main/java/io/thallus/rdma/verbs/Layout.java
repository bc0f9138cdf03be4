package io.thallus.rdma.verbs;

/**
 * Where the fields the binding touches lie in rdma-core's structs (x86-64, the {@code IBVERBS_1.1} ABI that
 * rdma-core has kept stable; printed with {@code offsetof} from rdma-core 44's headers). {@link RdmaDevice#open}
 * checks them against the live library before anything else runs, and the tests compare every one of them with
 * what the installed headers say.
 */
final class Layout {
  private Layout() {}

  static final long CONTEXT_DEVICE = 0;
  static final long CONTEXT_OPS = 8;
  static final long OPS_POLL_CQ = CONTEXT_OPS + 88;
  static final long OPS_REQ_NOTIFY_CQ = CONTEXT_OPS + 96;
  static final long OPS_POST_SEND = CONTEXT_OPS + 200;
  static final long OPS_POST_RECV = CONTEXT_OPS + 208;
  static final long OPS_ALLOC_MW = CONTEXT_OPS + 56;
  static final long OPS_DEALLOC_MW = CONTEXT_OPS + 72;

  static final long DEVICE_ATTR_SIZE = 232;
  static final long DEVICE_ATTR_MAX_MR_SIZE = 80;
  static final long DEVICE_ATTR_MAX_QP_WR = 112;
  static final long DEVICE_ATTR_MAX_SGE = 120;
  static final long DEVICE_ATTR_MAX_CQE = 132;
  static final long DEVICE_ATTR_MAX_QP_RD_ATOM = 144;
  static final long DEVICE_ATTR_MAX_QP_INIT_RD_ATOM = 156;
  static final long DEVICE_ATTR_PHYS_PORT_CNT = 227;
  static final long DEVICE_ATTR_CAP_FLAGS = 116;
  static final long DEVICE_ATTR_MAX_MW = 176;

  static final long PORT_ATTR_SIZE = 52;
  static final long PORT_ATTR_STATE = 0;
  static final long PORT_ATTR_ACTIVE_MTU = 8;
  static final long PORT_ATTR_LID = 34;
  static final long PORT_ATTR_LINK_LAYER = 46;

  static final long MR_ADDR = 16;
  static final long MR_LENGTH = 24;
  static final long MR_LKEY = 36;
  static final long MR_RKEY = 40;

  static final long MW_PD = 8;
  static final long MW_RKEY = 16;
  static final long MW_TYPE = 24;

  static final long COMP_CHANNEL_CONTEXT = 0;
  static final long COMP_CHANNEL_FD = 8;

  static final long CQ_CONTEXT = 0;
  static final long CQ_CHANNEL = 8;

  static final long QP_CONTEXT = 0;
  static final long QP_NUM = 52;

  static final long QP_INIT_ATTR_SIZE = 64;
  static final long QP_INIT_ATTR_SEND_CQ = 8;
  static final long QP_INIT_ATTR_RECV_CQ = 16;
  static final long QP_INIT_ATTR_CAP = 32;
  static final long QP_INIT_ATTR_QP_TYPE = 52;
  static final long QP_INIT_ATTR_SQ_SIG_ALL = 56;
  static final long QP_CAP_MAX_SEND_WR = 0;
  static final long QP_CAP_MAX_RECV_WR = 4;
  static final long QP_CAP_MAX_SEND_SGE = 8;
  static final long QP_CAP_MAX_RECV_SGE = 12;
  static final long QP_CAP_MAX_INLINE_DATA = 16;

  static final long QP_ATTR_SIZE = 144;
  static final long QP_ATTR_STATE = 0;
  static final long QP_ATTR_PATH_MTU = 8;
  static final long QP_ATTR_RQ_PSN = 20;
  static final long QP_ATTR_SQ_PSN = 24;
  static final long QP_ATTR_DEST_QP_NUM = 28;
  static final long QP_ATTR_ACCESS_FLAGS = 32;
  static final long QP_ATTR_AH_ATTR = 56;
  static final long QP_ATTR_PKEY_INDEX = 120;
  static final long QP_ATTR_MAX_RD_ATOMIC = 126;
  static final long QP_ATTR_MAX_DEST_RD_ATOMIC = 127;
  static final long QP_ATTR_MIN_RNR_TIMER = 128;
  static final long QP_ATTR_PORT_NUM = 129;
  static final long QP_ATTR_TIMEOUT = 130;
  static final long QP_ATTR_RETRY_CNT = 131;
  static final long QP_ATTR_RNR_RETRY = 132;
  static final long AH_ATTR_GRH_DGID = 0;
  static final long AH_ATTR_GRH_SGID_INDEX = 20;
  static final long AH_ATTR_GRH_HOP_LIMIT = 21;
  static final long AH_ATTR_DLID = 24;
  static final long AH_ATTR_IS_GLOBAL = 29;
  static final long AH_ATTR_PORT_NUM = 30;

  static final long SEND_WR_SIZE = 128;
  static final long SEND_WR_ID = 0;
  static final long SEND_WR_NEXT = 8;
  static final long SEND_WR_SG_LIST = 16;
  static final long SEND_WR_NUM_SGE = 24;
  static final long SEND_WR_OPCODE = 28;
  static final long SEND_WR_SEND_FLAGS = 32;
  static final long SEND_WR_REMOTE_ADDR = 40;
  static final long SEND_WR_RKEY = 48;
  static final long SEND_WR_INVALIDATE_RKEY = 36;
  /** Shares its four bytes with {@code invalidate_rkey}; big-endian ({@code __be32}) on the wire and in memory. */
  static final long SEND_WR_IMM_DATA = 36;
  static final long SEND_WR_BIND_MW = 80;
  static final long SEND_WR_BIND_RKEY = 88;
  static final long SEND_WR_BIND_MR = 96;
  static final long SEND_WR_BIND_ADDR = 104;
  static final long SEND_WR_BIND_LENGTH = 112;
  static final long SEND_WR_BIND_ACCESS = 120;

  static final long RECV_WR_SIZE = 32;
  static final long RECV_WR_ID = 0;
  static final long RECV_WR_NEXT = 8;
  static final long RECV_WR_SG_LIST = 16;
  static final long RECV_WR_NUM_SGE = 24;

  static final long SGE_SIZE = 16;
  static final long SGE_ADDR = 0;
  static final long SGE_LENGTH = 8;
  static final long SGE_LKEY = 12;

  static final long WC_SIZE = 48;
  static final long WC_ID = 0;
  static final long WC_STATUS = 8;
  static final long WC_OPCODE = 12;
  static final long WC_BYTE_LEN = 20;
  /** Big-endian, like the work request's; valid where {@link #WC_FLAGS} has {@link #WC_WITH_IMM}. */
  static final long WC_IMM_DATA = 24;
  static final long WC_QP_NUM = 28;
  static final long WC_FLAGS = 36;

  static final int WR_RDMA_WRITE = 0;
  static final int WR_RDMA_WRITE_WITH_IMM = 1;
  static final int WR_SEND = 2;
  static final int WR_SEND_WITH_IMM = 3;
  static final int WR_RDMA_READ = 4;
  static final int WR_LOCAL_INV = 7;
  static final int WR_BIND_MW = 8;
  static final int MW_TYPE_2 = 2;
  static final int ACCESS_MW_BIND = 16;
  static final int DEVICE_MEM_WINDOW_TYPE_2B = 1 << 24;
  static final int WC_BIND_MW = 5;
  static final int WC_LOCAL_INV = 6;
  static final int SEND_SIGNALED = 2;
  static final int SEND_INLINE = 8;
  static final int WC_SEND = 0;
  static final int WC_RDMA_WRITE = 1;
  static final int WC_RDMA_READ = 2;
  static final int WC_RECV = 128;
  static final int WC_RECV_RDMA_WITH_IMM = 129;
  static final int WC_WITH_IMM = 2;
  static final int ACCESS_LOCAL_WRITE = 1;
  static final int ACCESS_REMOTE_WRITE = 2;
  static final int ACCESS_REMOTE_READ = 4;
  static final int QPT_RC = 2;
  static final int QPS_INIT = 1;
  static final int QPS_RTR = 2;
  static final int QPS_RTS = 3;

  static final int QP_STATE = 1;
  static final int QP_ACCESS_FLAGS = 8;
  static final int QP_PKEY_INDEX = 16;
  static final int QP_PORT = 32;
  static final int QP_AV = 128;
  static final int QP_PATH_MTU = 256;
  static final int QP_TIMEOUT = 512;
  static final int QP_RETRY_CNT = 1024;
  static final int QP_RNR_RETRY = 2048;
  static final int QP_RQ_PSN = 4096;
  static final int QP_MAX_QP_RD_ATOMIC = 8192;
  static final int QP_MIN_RNR_TIMER = 32768;
  static final int QP_SQ_PSN = 65536;
  static final int QP_MAX_DEST_RD_ATOMIC = 131072;
  static final int QP_DEST_QPN = 1048576;

  static final int LINK_LAYER_ETHERNET = 2;
  static final int PORT_ACTIVE = 4;
}
