package io.thallus.flightsql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.conformance.Collected;
import io.thallus.conformance.DuckDBReference;
import io.thallus.conformance.Values;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.sql.FlightSqlClient;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.IntervalUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.Text;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A bound parameter's Arrow type reaches DuckDB as the same SQL type, so a prepared query's result is what DuckDB
 * gives for that typed value: its schema (GetFlightInfo's and DoGet's, which Flight clients compare) and its values
 * equal DuckDB's for the value written as a typed literal, run directly.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class FlightSqlParameterTypesTest {
  private static FlightSqlFixture fixture;
  private static FlightSqlLogin login;
  private static BufferAllocator clientMemory;
  private static FlightSqlClient sql;
  private static CallOption auth;

  @BeforeAll
  static void start() throws Exception {
    fixture = new FlightSqlFixture();
    login = FlightSqlLogin.of(fixture);
    clientMemory = login.memory();
    sql = login.sql();
    auth = login.auth();
  }

  @AfterAll
  static void stop() throws Exception {
    try (FlightSqlFixture server = fixture) {
      login.close();
    }
  }

  /** What a prepared query answered with one bound row: FlightInfo's schema, the stream's, and the rows. */
  private record Answer(Schema announced, Schema streamed, List<List<Object>> rows) {}

  private static Answer run(String query, Field parameter, Consumer<FieldVector> value) throws Exception {
    FlightSqlClient.PreparedStatement prepared = sql.prepare(query, auth);
    try (VectorSchemaRoot row = VectorSchemaRoot.create(new Schema(List.of(parameter)), clientMemory)) {
      value.accept(row.getVector(0));
      row.setRowCount(1);
      prepared.setParameters(row);
      FlightInfo info = prepared.execute(auth);
      List<List<Object>> rows = new ArrayList<>();
      Schema streamed = null;
      for (FlightEndpoint endpoint : info.getEndpoints()) {
        try (FlightStream stream = sql.getStream(endpoint.getTicket(), auth)) {
          streamed = stream.getSchema();
          while (stream.next()) {
            Values.appendRows(stream.getRoot(), stream.getDictionaryProvider(), rows);
          }
        }
      }
      return new Answer(info.getSchema(), streamed, rows);
    } finally {
      prepared.close(auth);
    }
  }

  /** The answer equals DuckDB's to {@code reference}, the query with the typed value written in. */
  private static void assertAsDuckDB(Answer answer, String reference) {
    Collected expected = DuckDBReference.run(reference, 1024);
    assertThat(answer.announced()).isEqualTo(answer.streamed());
    assertThat(answer.streamed().getFields()).isEqualTo(expected.schema().getFields());
    assertThat(answer.rows()).isEqualTo(expected.rows());
  }

  private static Field field(ArrowType type) {
    return Field.nullable("p", type);
  }

  @Test
  void anIntegerKeepsItsWidth() throws Exception {
    assertAsDuckDB(run("SELECT ? + 1 AS a", field(new ArrowType.Int(32, true)),
        vector -> ((IntVector) vector).setSafe(0, 41)), "SELECT 41::INTEGER + 1 AS a");
    assertAsDuckDB(run("SELECT ? + 1 AS a", field(new ArrowType.Int(64, true)),
        vector -> ((BigIntVector) vector).setSafe(0, 41)), "SELECT 41::BIGINT + 1 AS a");
  }

  @Test
  void bytesAndDatesResolveWhatDuckDBCannotTypeBeforeBinding() throws Exception {
    assertAsDuckDB(run("SELECT octet_length(?) AS n", field(ArrowType.Binary.INSTANCE),
        vector -> ((VarBinaryVector) vector).setSafe(0, new byte[] {1, 2, 3})),
        "SELECT octet_length('\\x01\\x02\\x03'::BLOB) AS n");
    assertAsDuckDB(run("SELECT ? + INTERVAL 1 DAY AS d", field(new ArrowType.Date(DateUnit.DAY)),
        vector -> ((DateDayVector) vector).setSafe(0, (int) LocalDate.of(2024, 1, 2).toEpochDay())),
        "SELECT DATE '2024-01-02' + INTERVAL 1 DAY AS d");
    assertAsDuckDB(run("SELECT ? AS s", field(ArrowType.Utf8.INSTANCE),
        vector -> ((VarCharVector) vector).setSafe(0, new Text("ümlaut"))), "SELECT 'ümlaut' AS s");
  }

  @Test
  void listsBindAsListsOfTheirElementType() throws Exception {
    Field bigints = new Field("p", FieldType.nullable(ArrowType.List.INSTANCE),
        List.of(Field.nullable("item", new ArrowType.Int(64, true))));
    assertAsDuckDB(run("SELECT ? AS l", bigints, vector -> fill((ListVector) vector, 0, Arrays.asList(1L, 2L, null,
        3L))), "SELECT [1, 2, NULL, 3]::BIGINT[] AS l");
    assertAsDuckDB(run("SELECT list_sum(?) AS s", bigints, vector -> fill((ListVector) vector, 0,
        List.of(5L, 6L))), "SELECT list_sum([5, 6]::BIGINT[]) AS s");
    Field nested = new Field("p", FieldType.nullable(ArrowType.List.INSTANCE), List.of(new Field("item",
        FieldType.nullable(ArrowType.List.INSTANCE), List.of(Field.nullable("item", new ArrowType.Int(32, true))))));
    assertAsDuckDB(run("SELECT ? AS l", nested, vector -> fill((ListVector) vector, 0, List.of(List.of(1),
        List.of(2, 3)))), "SELECT [[1], [2, 3]]::INTEGER[][] AS l");
    Field texts = new Field("p", FieldType.nullable(ArrowType.List.INSTANCE),
        List.of(Field.nullable("item", ArrowType.Utf8.INSTANCE)));
    assertAsDuckDB(run("SELECT ? AS l", texts, vector -> fill((ListVector) vector, 0, List.of("a", "bc"))),
        "SELECT ['a', 'bc'] AS l");
  }

  @Test
  void aTypeThatCannotBeBoundIsRefusedNamingIt() throws Exception {
    assertThatThrownBy(() -> run("SELECT ? AS i", field(new ArrowType.Interval(IntervalUnit.MONTH_DAY_NANO)),
        vector -> ((org.apache.arrow.vector.IntervalMonthDayNanoVector) vector).setSafe(0, 1, 2, 3)))
        .isInstanceOfSatisfying(FlightRuntimeException.class, e -> {
          assertThat(e.status().code()).isEqualTo(FlightStatusCode.INVALID_ARGUMENT);
          assertThat(e.getMessage()).contains("Arrow type Interval(MONTH_DAY_NANO)", "cannot be bound");
        });
  }

  /** Writes {@code values} (numbers, text or lists of them, null for NULL) as element {@code index} of a list. */
  private static void fill(ListVector list, int index, List<?> values) {
    int start = list.startNewValue(index);
    FieldVector elements = list.getDataVector();
    for (int i = 0; i < values.size(); i++) {
      Object value = values.get(i);
      int at = start + i;
      switch (elements) {
        case BigIntVector numbers when value == null -> numbers.setNull(at);
        case BigIntVector numbers -> numbers.setSafe(at, (Long) value);
        case IntVector numbers -> numbers.setSafe(at, (Integer) value);
        case VarCharVector texts -> texts.setSafe(at, ((String) value).getBytes(StandardCharsets.UTF_8));
        case ListVector inner -> fill(inner, at, (List<?>) value);
        default -> throw new AssertionError("no writer for " + elements.getField());
      }
    }
    list.endValue(index, values.size());
  }
}
