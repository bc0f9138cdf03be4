package io.thallus.internal.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.IngestMode;
import io.thallus.IngestRequest;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class TableNamesTest {
  @ParameterizedTest
  @ValueSource(ints = {3_000, 100_000})
  void aLongQuotedNameIsRefusedNamingTheLimitNotTheStack(int length) {
    String quoted = "\"" + "x".repeat(length - 2) + "\"";
    String doubledQuotes = "\"" + "\"\"".repeat((length - 2) / 2) + "\"";
    for (String name : new String[] {quoted, doubledQuotes, "main." + quoted}) {
      assertThat(IngestRequest.isTableName(name)).isFalse();
      assertThatThrownBy(() -> IngestRequest.of(name, IngestMode.CREATE))
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
          .hasMessage("INVALID_ARGUMENT: a table name of " + name.length()
              + " characters is over the maximum of 1024 characters");
    }
  }

  @Test
  void aNameOfTheLongestLengthIsAccepted() {
    String longest = "\"" + "a\"\"".repeat(340) + "bc\"";
    assertThat(longest).hasSize(1024);
    assertThat(IngestRequest.of(longest, IngestMode.CREATE).table()).isEqualTo(longest);
  }

  @Test
  void namesAreOneToThreeDottedPlainOrQuotedParts() {
    for (String name : new String[] {"t", "_t9$", "main.t", "db.main.t", "\"a b\"", "\"a \"\"b\"\"\".\"c.d\"",
        "\"\"\"\"", "x.\"y\".z"}) {
      assertThat(IngestRequest.isTableName(name)).as(name).isTrue();
    }
    for (String name : new String[] {"", "9t", "t;", "t; DROP TABLE x", "a.b.c.d", "a.", ".a", "a..b", "\"\"",
        "\"a", "\"a\"\"", "\"a\"b", "t-1", "\"a\" .b"}) {
      assertThat(IngestRequest.isTableName(name)).as(name).isFalse();
      assertThatThrownBy(() -> IngestRequest.of(name, IngestMode.CREATE))
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT))
          .hasMessageContaining("is not a table name");
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {3_000, 100_000})
  void anInsertOfALongQuotedNameOrManyPlaceholdersIsRecognizedWithoutRecursion(int length) {
    String table = "\"" + "x\"\"".repeat(length / 3) + "\"";
    assertThat(InsertStatements.parse("INSERT INTO main." + table + " (a) VALUES (?)"))
        .hasValueSatisfying(insert -> {
          assertThat(insert.target()).isEqualTo("main." + table);
          assertThat(insert.placeholders()).isEqualTo(1);
        });
    String placeholders = "?" + ", ?".repeat(length - 1);
    assertThat(InsertStatements.parse("INSERT INTO t VALUES (" + placeholders + ")"))
        .hasValueSatisfying(insert -> assertThat(insert.placeholders()).isEqualTo(length));
    assertThat(IngestRequest.forInsert("INSERT INTO " + table + " VALUES (?)", 1)).isEmpty();
  }
}
