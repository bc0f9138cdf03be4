package io.thallus.exchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.exchange.internal.ExchangeRequests;
import io.thallus.exchange.internal.ExchangeRequests.PushHeader;
import java.util.Arrays;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/** The exchange's one codec, without sockets: round trips, and every malformed request refused by name. */
class ExchangeRequestsTest {
  @Test
  void aPullRoundTrips() {
    ExchangeRequests.Pull pull = new ExchangeRequests.Pull(7, 199, new long[] {0, 3, 1L << 40});
    assertThat(ExchangeRequests.decodePull(ExchangeRequests.encode(pull))).isEqualTo(pull);
  }

  @Test
  void aPushHeaderRoundTrips() {
    PushHeader header = new PushHeader(3, 1L << 35, 2, true, 123_456, new int[] {0, 5, 9}, new int[] {10, 0, 7});
    PushHeader decoded = ExchangeRequests.decodePush(ExchangeRequests.encode(header));
    assertThat(decoded).isEqualTo(header);
    assertThat(decoded.totalRows()).isEqualTo(17);
  }

  @Test
  void everyTruncationOfAPullIsRefused() {
    byte[] whole = ExchangeRequests.encode(new ExchangeRequests.Pull(1, 2, new long[] {3, 4}));
    for (int length = 0; length < whole.length; length++) {
      byte[] cut = Arrays.copyOf(whole, length);
      assertThatThrownBy(() -> ExchangeRequests.decodePull(cut)).as("length " + length)
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT));
    }
  }

  @Test
  void trailingBytesNegativeIdsAndTheWrongKindAreRefused() {
    byte[] pull = ExchangeRequests.encode(new ExchangeRequests.Pull(1, 2, new long[] {3}));
    assertInvalid(() -> ExchangeRequests.decodePull(Arrays.copyOf(pull, pull.length + 1)), "past its end");
    byte[] negative = pull.clone();
    negative[2] = (byte) 0x80;
    assertInvalid(() -> ExchangeRequests.decodePull(negative), "negative");
    String push = ExchangeRequests.encode(new PushHeader(1, 2, 0, false, 10, new int[] {0}, new int[] {1}));
    assertInvalid(() -> ExchangeRequests.decodePull(Base64.getDecoder().decode(push)), "not a pull");
    assertInvalid(() -> ExchangeRequests.decodePush(Base64.getEncoder().encodeToString(pull)), "not a push");
    assertInvalid(() -> ExchangeRequests.decodePush("not base64 !"), "not Base64");
  }

  @Test
  void aCountLargerThanTheRequestIsRefusedBeforeAnythingIsAllocated() {
    byte[] pull = ExchangeRequests.encode(new ExchangeRequests.Pull(1, 2, new long[] {3}));
    byte[] partitions = pull.clone();
    partitions[6] = 0x7f;
    assertInvalid(() -> ExchangeRequests.decodePull(partitions), "partitions do not fit");
    byte[] maps = pull.clone();
    maps[14] = 0x7f;
    assertInvalid(() -> ExchangeRequests.decodePull(maps), "map ids do not fit");
  }

  @Test
  void aRangePullRoundTripsWithEachPartitionsOwnMaps() {
    ExchangeRequests.Pull pull = new ExchangeRequests.Pull(7, new int[] {3, 4, 9},
        new long[][] {{0, 1, 2, 3}, {1}, {3, 1L << 40}});
    ExchangeRequests.Pull decoded = ExchangeRequests.decodePull(ExchangeRequests.encode(pull));
    assertThat(decoded).isEqualTo(pull);
    assertThat(decoded.mapIds(2)).containsExactly(3, 1L << 40);
  }

  @Test
  void aRangePullThatLiesIsRefusedByName() {
    assertInvalid(() -> ExchangeRequests.decodePull(ExchangeRequests.encode(
        new ExchangeRequests.Pull(1, new int[] {4, 4}, new long[][] {{0}, {1}}))), "not strictly ascending");
    assertInvalid(() -> ExchangeRequests.decodePull(ExchangeRequests.encode(
        new ExchangeRequests.Pull(1, new int[] {5, 2}, new long[][] {{0}, {1}}))), "not strictly ascending");
    assertInvalid(() -> ExchangeRequests.decodePull(ExchangeRequests.encode(
        new ExchangeRequests.Pull(1, new int[] {1, 2}, new long[][] {{}, {0, 1, 2}}))), "no map for partition 1");
    assertInvalid(() -> ExchangeRequests.decodePull(ExchangeRequests.encode(
        new ExchangeRequests.Pull(1, new int[0], new long[0][]))), "no partition");
    assertInvalid(() -> ExchangeRequests.decodePull(ExchangeRequests.encode(
        new ExchangeRequests.Pull(1, new int[] {1, -2}, new long[][] {{0}, {1}}))), "negative");
    // More partitions than the bound: the count alone is refused, whatever bytes follow.
    byte[] many = java.nio.ByteBuffer.allocate(10 + 16).put((byte) 2).put((byte) 1).putInt(1)
        .putInt(ExchangeRequests.MAX_ENTRIES + 1).putInt(0).putInt(1).putLong(0).array();
    assertInvalid(() -> ExchangeRequests.decodePull(many), "at most " + ExchangeRequests.MAX_ENTRIES);
  }

  private static void assertInvalid(Runnable decode, String message) {
    assertThatThrownBy(decode::run).isInstanceOfSatisfying(ThallusException.class, e -> {
      assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT);
      assertThat(e.getMessage()).contains(message);
    });
  }
}
