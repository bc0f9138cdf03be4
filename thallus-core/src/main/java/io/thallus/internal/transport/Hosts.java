package io.thallus.internal.transport;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;

/** Whether an address is this machine: what same-host transports need to know. */
public final class Hosts {
  private Hosts() {}

  public static boolean isLocal(String host) {
    try {
      for (InetAddress address : InetAddress.getAllByName(host)) {
        if (isLocal(address)) {
          return true;
        }
      }
      return false;
    } catch (UnknownHostException e) {
      return false;
    }
  }

  public static boolean isLocal(InetAddress address) {
    if (address.isLoopbackAddress() || address.isAnyLocalAddress()) {
      return true;
    }
    try {
      return NetworkInterface.getByInetAddress(address) != null;
    } catch (SocketException e) {
      return false;
    }
  }
}
