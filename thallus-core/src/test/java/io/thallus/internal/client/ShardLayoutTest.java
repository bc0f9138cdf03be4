package io.thallus.internal.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.thallus.DatasetDescription;
import io.thallus.DatasetDescription.FilePart;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/** The layout of files over servers, and the query shapes a sharded read runs, without servers. */
class ShardLayoutTest {
  private static final List<String> SERVERS = List.of("s0", "s1", "s2");

  private static DatasetDescription files(FilePart... parts) {
    return new DatasetDescription(DatasetDescription.Kind.FILES, new Schema(List.of()), List.of(parts));
  }

  private static FilePart file(String id, char checksum) {
    return new FilePart("/root/" + id, 10, 1, List.of(), id, String.valueOf(checksum).repeat(64));
  }

  @Test
  void replicasAreReadOnceFromTheFirstLiveHolder() {
    ShardLayout layout = ShardLayout.of(SERVERS, List.of(files(file("a", '1'), file("r", 'f')),
        files(file("b", '2')), files(file("r", 'f'), file("c", '3'))));
    assertThat(layout.holders("r")).containsExactly(0, 2);
    assertThat(layout.assign(Set.of())).isEqualTo(Map.of(0, List.of("a", "r"), 1, List.of("b"), 2, List.of("c")));
    assertThatThrownBy(() -> layout.assign(Set.of(0)))
        .isInstanceOfSatisfying(ThallusException.class, e -> assertThat(e.code()).isEqualTo(StatusCode.UNAVAILABLE))
        .hasMessageContaining("s0").hasMessageContaining("file a");
    ShardLayout replicated = ShardLayout.of(SERVERS, List.of(files(file("r", 'f')), files(file("b", '2')),
        files(file("r", 'f'))));
    assertThat(replicated.assign(Set.of(0))).isEqualTo(Map.of(1, List.of("b"), 2, List.of("r")));
  }

  @Test
  void oneIdOfTwoChecksumsNamesBothServers() {
    assertThatThrownBy(() -> ShardLayout.of(SERVERS, List.of(files(file("a", '1')), files(), files(file("a", '2')))))
        .isInstanceOfSatisfying(ThallusException.class,
            e -> assertThat(e.code()).isEqualTo(StatusCode.FAILED_PRECONDITION))
        .hasMessageContaining("file a differs between servers s0").hasMessageContaining("and s2");
  }

  @Test
  void filesWithoutIdsCannotBeSharded() {
    assertThatThrownBy(() -> ShardLayout.of(SERVERS, List.of(files(new FilePart("/root/a", 1, 1, List.of())))))
        .hasMessageContaining("no id or checksum");
  }

  @Test
  void rowWiseSelectsPassAndOthersAreRefused() {
    for (String sql : List.of("SELECT * FROM dataset", "select a, b + 1 AS c FROM dataset WHERE a > ? ;",
        "SELECT d.a FROM \"dataset\" AS d WHERE d.b LIKE '%order by%'", "SELECT \"count\" FROM dataset",
        "SELECT extract(year FROM ts), list_filter(l, x -> x > 1) FROM dataset", "SELECT * EXCLUDE (v) FROM dataset")) {
      assertThatCode(() -> ShardQueryShape.check(sql)).as(sql).doesNotThrowAnyException();
    }
    for (String sql : List.of("", "SELECT", "SELECT a FROM 'dataset'", "SELECT a FROM other",
        "SELECT a FROM dataset t, u", "SELECT max(a) FROM dataset", "SELECT a FROM dataset WHERE a = $1",
        "SELECT a FROM dataset /* not closed", "SELECT 'not closed FROM dataset", "EXPLAIN SELECT a FROM dataset",
        "SELECT a FROM dataset QUALIFY a > 1", "SELECT a FROM dataset USING SAMPLE 10")) {
      assertThatThrownBy(() -> ShardQueryShape.check(sql)).as(sql)
          .isInstanceOfSatisfying(ThallusException.class,
              e -> assertThat(e.code()).isEqualTo(StatusCode.INVALID_ARGUMENT));
    }
  }
}
