package io.thallus.harness;

import io.thallus.rdma.verbs.QueuePair;
import io.thallus.rdma.verbs.RdmaDevice;
import java.util.List;

/** The device the measurements run on: rxe0 where it exists (the Soft-RoCE guest), else the first one. */
final class Devices {
  /** How the measurements connect their queue pairs: as the device reports (GID, MTU), up to 16 reads in flight. */
  static QueuePair.ConnectOptions options(RdmaDevice device) {
    return QueuePair.ConnectOptions.forDevice(device, 16);
  }

  private Devices() {}

  static String deviceName() {
    List<String> names = RdmaDevice.deviceNames();
    if (names.isEmpty()) {
      throw new IllegalStateException("no RDMA device here: run this inside the Soft-RoCE guest (harness/rxe-vm.sh)");
    }
    return names.contains("rxe0") ? "rxe0" : names.getFirst();
  }
}
