package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PlaceholderScanTest {
  @Test
  void findsPlaceholdersOutsideLiteralsNamesAndComments() {
    assertThat(StatementText.mayHavePlaceholders("SELECT * FROM t WHERE a = ?")).isTrue();
    assertThat(StatementText.mayHavePlaceholders("SELECT $1 + 1")).isTrue();
    assertThat(StatementText.mayHavePlaceholders("SELECT 42")).isFalse();
    assertThat(StatementText.mayHavePlaceholders("SELECT 'what?' AS \"who?\" -- why?\n FROM t /* $1 */"))
        .isFalse();
    assertThat(StatementText.mayHavePlaceholders("SELECT 'it''s ?' , ?")).isTrue();
    assertThat(StatementText.mayHavePlaceholders("SELECT 'unterminated")).isTrue();
  }
}
