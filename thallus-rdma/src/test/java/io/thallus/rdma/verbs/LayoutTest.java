package io.thallus.rdma.verbs;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every offset and constant in {@link Layout} against what the installed rdma-core headers say, printed by a C
 * probe compiled here (the binding itself compiles nothing). Skipped where no C compiler or libibverbs-dev is
 * installed; the harness installs both.
 */
class LayoutTest {
  @TempDir
  Path temp;

  /** Java constant name → the C expression whose value it must equal. */
  private static final Map<String, String> EXPECTED = new LinkedHashMap<>();

  static {
    String[][] pairs = {
        {"CONTEXT_DEVICE", "offsetof(struct ibv_context, device)"},
        {"CONTEXT_OPS", "offsetof(struct ibv_context, ops)"},
        {"OPS_POLL_CQ", "offsetof(struct ibv_context, ops) + offsetof(struct ibv_context_ops, poll_cq)"},
        {"OPS_REQ_NOTIFY_CQ", "offsetof(struct ibv_context, ops) + offsetof(struct ibv_context_ops, req_notify_cq)"},
        {"OPS_POST_SEND", "offsetof(struct ibv_context, ops) + offsetof(struct ibv_context_ops, post_send)"},
        {"OPS_POST_RECV", "offsetof(struct ibv_context, ops) + offsetof(struct ibv_context_ops, post_recv)"},
        {"OPS_ALLOC_MW", "offsetof(struct ibv_context, ops) + offsetof(struct ibv_context_ops, alloc_mw)"},
        {"OPS_DEALLOC_MW", "offsetof(struct ibv_context, ops) + offsetof(struct ibv_context_ops, dealloc_mw)"},
        {"DEVICE_ATTR_SIZE", "sizeof(struct ibv_device_attr)"},
        {"DEVICE_ATTR_CAP_FLAGS", "offsetof(struct ibv_device_attr, device_cap_flags)"},
        {"DEVICE_ATTR_MAX_MW", "offsetof(struct ibv_device_attr, max_mw)"},
        {"MW_PD", "offsetof(struct ibv_mw, pd)"},
        {"MW_RKEY", "offsetof(struct ibv_mw, rkey)"},
        {"MW_TYPE", "offsetof(struct ibv_mw, type)"},
        {"DEVICE_ATTR_MAX_MR_SIZE", "offsetof(struct ibv_device_attr, max_mr_size)"},
        {"DEVICE_ATTR_MAX_QP_WR", "offsetof(struct ibv_device_attr, max_qp_wr)"},
        {"DEVICE_ATTR_MAX_SGE", "offsetof(struct ibv_device_attr, max_sge)"},
        {"DEVICE_ATTR_MAX_CQE", "offsetof(struct ibv_device_attr, max_cqe)"},
        {"DEVICE_ATTR_MAX_QP_RD_ATOM", "offsetof(struct ibv_device_attr, max_qp_rd_atom)"},
        {"DEVICE_ATTR_MAX_QP_INIT_RD_ATOM", "offsetof(struct ibv_device_attr, max_qp_init_rd_atom)"},
        {"DEVICE_ATTR_PHYS_PORT_CNT", "offsetof(struct ibv_device_attr, phys_port_cnt)"},
        {"PORT_ATTR_STATE", "offsetof(struct ibv_port_attr, state)"},
        {"PORT_ATTR_ACTIVE_MTU", "offsetof(struct ibv_port_attr, active_mtu)"},
        {"PORT_ATTR_LID", "offsetof(struct ibv_port_attr, lid)"},
        {"PORT_ATTR_LINK_LAYER", "offsetof(struct ibv_port_attr, link_layer)"},
        {"MR_ADDR", "offsetof(struct ibv_mr, addr)"},
        {"MR_LENGTH", "offsetof(struct ibv_mr, length)"},
        {"MR_LKEY", "offsetof(struct ibv_mr, lkey)"},
        {"MR_RKEY", "offsetof(struct ibv_mr, rkey)"},
        {"COMP_CHANNEL_CONTEXT", "offsetof(struct ibv_comp_channel, context)"},
        {"COMP_CHANNEL_FD", "offsetof(struct ibv_comp_channel, fd)"},
        {"CQ_CONTEXT", "offsetof(struct ibv_cq, context)"},
        {"CQ_CHANNEL", "offsetof(struct ibv_cq, channel)"},
        {"QP_CONTEXT", "offsetof(struct ibv_qp, context)"},
        {"QP_NUM", "offsetof(struct ibv_qp, qp_num)"},
        {"QP_INIT_ATTR_SIZE", "sizeof(struct ibv_qp_init_attr)"},
        {"QP_INIT_ATTR_SEND_CQ", "offsetof(struct ibv_qp_init_attr, send_cq)"},
        {"QP_INIT_ATTR_RECV_CQ", "offsetof(struct ibv_qp_init_attr, recv_cq)"},
        {"QP_INIT_ATTR_CAP", "offsetof(struct ibv_qp_init_attr, cap)"},
        {"QP_INIT_ATTR_QP_TYPE", "offsetof(struct ibv_qp_init_attr, qp_type)"},
        {"QP_INIT_ATTR_SQ_SIG_ALL", "offsetof(struct ibv_qp_init_attr, sq_sig_all)"},
        {"QP_CAP_MAX_SEND_WR", "offsetof(struct ibv_qp_cap, max_send_wr)"},
        {"QP_CAP_MAX_RECV_WR", "offsetof(struct ibv_qp_cap, max_recv_wr)"},
        {"QP_CAP_MAX_SEND_SGE", "offsetof(struct ibv_qp_cap, max_send_sge)"},
        {"QP_CAP_MAX_RECV_SGE", "offsetof(struct ibv_qp_cap, max_recv_sge)"},
        {"QP_CAP_MAX_INLINE_DATA", "offsetof(struct ibv_qp_cap, max_inline_data)"},
        {"QP_ATTR_SIZE", "sizeof(struct ibv_qp_attr)"},
        {"QP_ATTR_STATE", "offsetof(struct ibv_qp_attr, qp_state)"},
        {"QP_ATTR_PATH_MTU", "offsetof(struct ibv_qp_attr, path_mtu)"},
        {"QP_ATTR_RQ_PSN", "offsetof(struct ibv_qp_attr, rq_psn)"},
        {"QP_ATTR_SQ_PSN", "offsetof(struct ibv_qp_attr, sq_psn)"},
        {"QP_ATTR_DEST_QP_NUM", "offsetof(struct ibv_qp_attr, dest_qp_num)"},
        {"QP_ATTR_ACCESS_FLAGS", "offsetof(struct ibv_qp_attr, qp_access_flags)"},
        {"QP_ATTR_AH_ATTR", "offsetof(struct ibv_qp_attr, ah_attr)"},
        {"QP_ATTR_PKEY_INDEX", "offsetof(struct ibv_qp_attr, pkey_index)"},
        {"QP_ATTR_MAX_RD_ATOMIC", "offsetof(struct ibv_qp_attr, max_rd_atomic)"},
        {"QP_ATTR_MAX_DEST_RD_ATOMIC", "offsetof(struct ibv_qp_attr, max_dest_rd_atomic)"},
        {"QP_ATTR_MIN_RNR_TIMER", "offsetof(struct ibv_qp_attr, min_rnr_timer)"},
        {"QP_ATTR_PORT_NUM", "offsetof(struct ibv_qp_attr, port_num)"},
        {"QP_ATTR_TIMEOUT", "offsetof(struct ibv_qp_attr, timeout)"},
        {"QP_ATTR_RETRY_CNT", "offsetof(struct ibv_qp_attr, retry_cnt)"},
        {"QP_ATTR_RNR_RETRY", "offsetof(struct ibv_qp_attr, rnr_retry)"},
        {"AH_ATTR_GRH_DGID", "offsetof(struct ibv_ah_attr, grh) + offsetof(struct ibv_global_route, dgid)"},
        {"AH_ATTR_GRH_SGID_INDEX", "offsetof(struct ibv_ah_attr, grh) + offsetof(struct ibv_global_route, sgid_index)"},
        {"AH_ATTR_GRH_HOP_LIMIT", "offsetof(struct ibv_ah_attr, grh) + offsetof(struct ibv_global_route, hop_limit)"},
        {"AH_ATTR_DLID", "offsetof(struct ibv_ah_attr, dlid)"},
        {"AH_ATTR_IS_GLOBAL", "offsetof(struct ibv_ah_attr, is_global)"},
        {"AH_ATTR_PORT_NUM", "offsetof(struct ibv_ah_attr, port_num)"},
        {"SEND_WR_SIZE", "sizeof(struct ibv_send_wr)"},
        {"SEND_WR_ID", "offsetof(struct ibv_send_wr, wr_id)"},
        {"SEND_WR_NEXT", "offsetof(struct ibv_send_wr, next)"},
        {"SEND_WR_SG_LIST", "offsetof(struct ibv_send_wr, sg_list)"},
        {"SEND_WR_NUM_SGE", "offsetof(struct ibv_send_wr, num_sge)"},
        {"SEND_WR_OPCODE", "offsetof(struct ibv_send_wr, opcode)"},
        {"SEND_WR_SEND_FLAGS", "offsetof(struct ibv_send_wr, send_flags)"},
        {"SEND_WR_REMOTE_ADDR", "offsetof(struct ibv_send_wr, wr.rdma.remote_addr)"},
        {"SEND_WR_RKEY", "offsetof(struct ibv_send_wr, wr.rdma.rkey)"},
        {"SEND_WR_INVALIDATE_RKEY", "offsetof(struct ibv_send_wr, invalidate_rkey)"},
        {"SEND_WR_IMM_DATA", "offsetof(struct ibv_send_wr, imm_data)"},
        {"RECV_WR_SIZE", "sizeof(struct ibv_recv_wr)"},
        {"RECV_WR_ID", "offsetof(struct ibv_recv_wr, wr_id)"},
        {"RECV_WR_NEXT", "offsetof(struct ibv_recv_wr, next)"},
        {"RECV_WR_SG_LIST", "offsetof(struct ibv_recv_wr, sg_list)"},
        {"RECV_WR_NUM_SGE", "offsetof(struct ibv_recv_wr, num_sge)"},
        {"SEND_WR_BIND_MW", "offsetof(struct ibv_send_wr, bind_mw.mw)"},
        {"SEND_WR_BIND_RKEY", "offsetof(struct ibv_send_wr, bind_mw.rkey)"},
        {"SEND_WR_BIND_MR", "offsetof(struct ibv_send_wr, bind_mw.bind_info.mr)"},
        {"SEND_WR_BIND_ADDR", "offsetof(struct ibv_send_wr, bind_mw.bind_info.addr)"},
        {"SEND_WR_BIND_LENGTH", "offsetof(struct ibv_send_wr, bind_mw.bind_info.length)"},
        {"SEND_WR_BIND_ACCESS", "offsetof(struct ibv_send_wr, bind_mw.bind_info.mw_access_flags)"},
        {"SGE_SIZE", "sizeof(struct ibv_sge)"},
        {"SGE_ADDR", "offsetof(struct ibv_sge, addr)"},
        {"SGE_LENGTH", "offsetof(struct ibv_sge, length)"},
        {"SGE_LKEY", "offsetof(struct ibv_sge, lkey)"},
        {"WC_SIZE", "sizeof(struct ibv_wc)"},
        {"WC_ID", "offsetof(struct ibv_wc, wr_id)"},
        {"WC_STATUS", "offsetof(struct ibv_wc, status)"},
        {"WC_OPCODE", "offsetof(struct ibv_wc, opcode)"},
        {"WC_BYTE_LEN", "offsetof(struct ibv_wc, byte_len)"},
        {"WC_IMM_DATA", "offsetof(struct ibv_wc, imm_data)"},
        {"WC_QP_NUM", "offsetof(struct ibv_wc, qp_num)"},
        {"WC_FLAGS", "offsetof(struct ibv_wc, wc_flags)"},
        {"WR_RDMA_WRITE", "IBV_WR_RDMA_WRITE"}, {"WR_RDMA_WRITE_WITH_IMM", "IBV_WR_RDMA_WRITE_WITH_IMM"},
        {"WR_SEND", "IBV_WR_SEND"}, {"WR_SEND_WITH_IMM", "IBV_WR_SEND_WITH_IMM"}, {"SEND_INLINE", "IBV_SEND_INLINE"},
        {"WC_SEND", "IBV_WC_SEND"}, {"WC_RDMA_WRITE", "IBV_WC_RDMA_WRITE"}, {"WC_RDMA_READ", "IBV_WC_RDMA_READ"},
        {"WC_RECV", "IBV_WC_RECV"}, {"WC_RECV_RDMA_WITH_IMM", "IBV_WC_RECV_RDMA_WITH_IMM"},
        {"WC_WITH_IMM", "IBV_WC_WITH_IMM"}, {"ACCESS_LOCAL_WRITE", "IBV_ACCESS_LOCAL_WRITE"},
        {"ACCESS_REMOTE_WRITE", "IBV_ACCESS_REMOTE_WRITE"}, {"ACCESS_REMOTE_READ", "IBV_ACCESS_REMOTE_READ"},
        {"WR_LOCAL_INV", "IBV_WR_LOCAL_INV"}, {"WR_BIND_MW", "IBV_WR_BIND_MW"}, {"MW_TYPE_2", "IBV_MW_TYPE_2"},
        {"ACCESS_MW_BIND", "IBV_ACCESS_MW_BIND"}, {"DEVICE_MEM_WINDOW_TYPE_2B", "IBV_DEVICE_MEM_WINDOW_TYPE_2B"},
        {"WC_BIND_MW", "IBV_WC_BIND_MW"}, {"WC_LOCAL_INV", "IBV_WC_LOCAL_INV"},
        {"WR_RDMA_READ", "IBV_WR_RDMA_READ"}, {"SEND_SIGNALED", "IBV_SEND_SIGNALED"}, {"QPT_RC", "IBV_QPT_RC"},
        {"QPS_INIT", "IBV_QPS_INIT"}, {"QPS_RTR", "IBV_QPS_RTR"}, {"QPS_RTS", "IBV_QPS_RTS"},
        {"QP_STATE", "IBV_QP_STATE"}, {"QP_ACCESS_FLAGS", "IBV_QP_ACCESS_FLAGS"}, {"QP_PKEY_INDEX", "IBV_QP_PKEY_INDEX"},
        {"QP_PORT", "IBV_QP_PORT"}, {"QP_AV", "IBV_QP_AV"}, {"QP_PATH_MTU", "IBV_QP_PATH_MTU"},
        {"QP_TIMEOUT", "IBV_QP_TIMEOUT"}, {"QP_RETRY_CNT", "IBV_QP_RETRY_CNT"}, {"QP_RNR_RETRY", "IBV_QP_RNR_RETRY"},
        {"QP_RQ_PSN", "IBV_QP_RQ_PSN"}, {"QP_MAX_QP_RD_ATOMIC", "IBV_QP_MAX_QP_RD_ATOMIC"},
        {"QP_MIN_RNR_TIMER", "IBV_QP_MIN_RNR_TIMER"}, {"QP_SQ_PSN", "IBV_QP_SQ_PSN"},
        {"QP_MAX_DEST_RD_ATOMIC", "IBV_QP_MAX_DEST_RD_ATOMIC"}, {"QP_DEST_QPN", "IBV_QP_DEST_QPN"},
        {"LINK_LAYER_ETHERNET", "IBV_LINK_LAYER_ETHERNET"}, {"PORT_ACTIVE", "IBV_PORT_ACTIVE"}};
    for (String[] pair : pairs) {
      EXPECTED.put(pair[0], pair[1]);
    }
  }

  @Test
  void everyOffsetMatchesTheInstalledHeaders() throws Exception {
    Assumptions.assumeTrue(Files.exists(Path.of("/usr/include/infiniband/verbs.h")),
        "libibverbs-dev is not installed (harness/rxe-vm.sh installs it)");
    StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n#include <infiniband/verbs.h>\n"
        + "int main(void) {\n");
    for (Map.Entry<String, String> entry : EXPECTED.entrySet()) {
      c.append("  printf(\"").append(entry.getKey()).append(" %ld\\n\", (long) (").append(entry.getValue())
          .append("));\n");
    }
    c.append("  return 0;\n}\n");
    Path source = temp.resolve("layout.c");
    Files.writeString(source, c);
    Path binary = temp.resolve("layout");
    Process compile = new ProcessBuilder("cc", "-o", binary.toString(), source.toString())
        .redirectErrorStream(true).start();
    String compileOutput = new String(compile.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    Assumptions.assumeTrue(compile.waitFor(60, TimeUnit.SECONDS) && compile.exitValue() == 0,
        () -> "cannot compile the layout probe: " + compileOutput);
    Process probe = new ProcessBuilder(binary.toString()).start();
    String printed = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(probe.waitFor(30, TimeUnit.SECONDS)).isTrue();

    Map<String, Long> actual = new LinkedHashMap<>();
    for (String line : printed.strip().split("\n")) {
      String[] parts = line.split(" ");
      actual.put(parts[0], Long.parseLong(parts[1]));
    }
    Map<String, Long> ours = new LinkedHashMap<>();
    for (Field field : Layout.class.getDeclaredFields()) {
      if (Modifier.isStatic(field.getModifiers()) && EXPECTED.containsKey(field.getName())) {
        field.setAccessible(true);
        ours.put(field.getName(), ((Number) field.get(null)).longValue());
      }
    }
    assertThat(ours).as("every constant is checked").hasSameSizeAs(EXPECTED);
    assertThat(ours).isEqualTo(actual);
  }
}
