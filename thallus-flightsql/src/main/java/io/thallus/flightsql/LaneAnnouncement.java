package io.thallus.flightsql;

import io.thallus.Location;
import io.thallus.ThallusException;
import io.thallus.spi.Transport;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How a FlightInfo's endpoint announces the Thallus lanes of its statement: in the endpoint's {@code app_metadata},
 * never as locations. Generic Flight clients (ADBC's drivers, the Flight SQL JDBC driver, pyarrow) try an endpoint's
 * locations before the connection they have (ADBC's Java driver even picks one at random), so a {@code thallus+}
 * location costs each of them a failed connection per query; none of them reads {@code app_metadata}, and an endpoint
 * with no location is read on the connection the client has, by every Flight client old or new.
 *
 * <p>The metadata is UTF-8 text: the line {@value #HEADER}, then one location per line, fastest first
 * ({@code thallus+shm://127.0.0.1:47470}). Metadata without that first line is another server's, not a lane.
 */
final class LaneAnnouncement {
  static final String HEADER = "thallus-lanes/1";
  /** Bounds on what a reader takes: a server has a handful of transports. */
  static final int MAX_LANES = 16;
  static final int MAX_BYTES = 4096;

  private LaneAnnouncement() {}

  /**
   * The metadata announcing {@code lanes}, or an empty array for none. Each lane names its transport; a server whose
   * gRPC door uses TLS announces only transports whose bodies stay protected under TLS (not tcp, not rdma), the
   * ones a TLS Thallus server offers.
   */
  static byte[] encode(List<Location> lanes, boolean tls) {
    if (lanes.isEmpty()) {
      return new byte[0];
    }
    if (lanes.size() > MAX_LANES) {
      throw new IllegalArgumentException("at most " + MAX_LANES + " lanes can be announced, not " + lanes.size());
    }
    StringBuilder text = new StringBuilder(HEADER).append('\n');
    for (Location lane : lanes) {
      String transport = lane.transport().orElseThrow(() -> new IllegalArgumentException("the lane " + lane
          + " names no transport: announce thallus+NAME://host:port, one per transport the server offers"));
      if (tls && !confidentialUnderTls(transport)) {
        throw new IllegalArgumentException("a Flight SQL server with TLS cannot announce the lane " + lane
            + ": its bodies travel outside TLS, and a TLS Thallus server does not offer " + transport);
      }
      text.append(lane).append('\n');
    }
    byte[] bytes = text.toString().getBytes(StandardCharsets.UTF_8);
    if (bytes.length > MAX_BYTES) {
      throw new IllegalArgumentException("the lanes take " + bytes.length + " bytes, more than " + MAX_BYTES);
    }
    return bytes;
  }

  /**
   * The lanes {@code appMetadata} announces, in the server's order; empty when it is not a lane announcement (none,
   * or another server's metadata). An announcement that is malformed or over the bounds is an error naming why.
   */
  static Optional<List<Location>> decode(byte[] appMetadata) {
    byte[] header = (HEADER + "\n").getBytes(StandardCharsets.UTF_8);
    if (appMetadata == null || !startsWith(appMetadata, header)) {
      return Optional.empty();
    }
    if (appMetadata.length > MAX_BYTES) {
      throw new IllegalArgumentException("the endpoint's lane announcement has " + appMetadata.length
          + " bytes, more than " + MAX_BYTES);
    }
    String[] lines = new String(appMetadata, header.length, appMetadata.length - header.length,
        StandardCharsets.UTF_8).split("\n");
    List<Location> lanes = new ArrayList<>();
    for (String line : lines) {
      if (line.isEmpty()) {
        continue;
      }
      if (lanes.size() == MAX_LANES) {
        throw new IllegalArgumentException("the endpoint announces more than " + MAX_LANES + " lanes");
      }
      Location lane;
      try {
        lane = Location.parse(line);
      } catch (ThallusException e) {
        throw new IllegalArgumentException("the endpoint's lane announcement has a bad line: " + e.getMessage(), e);
      }
      if (lane.transport().isEmpty()) {
        throw new IllegalArgumentException("the endpoint announces a lane without a transport: " + line);
      }
      lanes.add(lane);
    }
    return lanes.isEmpty() ? Optional.empty() : Optional.of(List.copyOf(lanes));
  }

  private static boolean confidentialUnderTls(String transport) {
    try {
      return Transport.installed(List.of(transport)).getFirst().confidentialUnderTls();
    } catch (ThallusException e) {
      throw new IllegalArgumentException("cannot announce a lane over " + transport + " under TLS: "
          + e.getMessage(), e);
    }
  }

  private static boolean startsWith(byte[] bytes, byte[] prefix) {
    return bytes.length >= prefix.length
        && java.util.Arrays.equals(bytes, 0, prefix.length, prefix, 0, prefix.length);
  }
}
