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
    byte[] pull = ExchangeRequests.encode(new ExchangeRequests.Pull(1, 2, new long[0]));
    pull[10] = 0x7f;
    assertInvalid(() -> ExchangeRequests.decodePull(pull), "do not fit");
  }

  private static void assertInvalid(Runnable decode, String message) {
    assertThatThrownBy(decode::run).isInstanceOfSatisfying(ThallusException.class, e -> {
      assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT);
      assertThat(e.getMessage()).contains(message);
    });
  }
}
