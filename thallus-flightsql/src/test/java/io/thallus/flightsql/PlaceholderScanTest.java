package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PlaceholderScanTest {
  @Test
  void findsPlaceholdersOutsideLiteralsNamesAndComments() {
    assertThat(ThallusSqlProducer.mayHavePlaceholders("SELECT * FROM t WHERE a = ?")).isTrue();
    assertThat(ThallusSqlProducer.mayHavePlaceholders("SELECT $1 + 1")).isTrue();
    assertThat(ThallusSqlProducer.mayHavePlaceholders("SELECT 42")).isFalse();
    assertThat(ThallusSqlProducer.mayHavePlaceholders("SELECT 'what?' AS \"who?\" -- why?\n FROM t /* $1 */"))
        .isFalse();
    assertThat(ThallusSqlProducer.mayHavePlaceholders("SELECT 'it''s ?' , ?")).isTrue();
    assertThat(ThallusSqlProducer.mayHavePlaceholders("SELECT 'unterminated")).isTrue();
  }
}
