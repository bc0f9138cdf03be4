package io.thallus;

import java.util.List;
import java.util.Objects;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A statement as the server's engine understands it without running it: its {@link StatementKind}, the Arrow type
 * of each of its placeholders in order ({@code ?}, {@code $1}; a type the engine cannot tell before a value is bound
 * is {@link org.apache.arrow.vector.types.pojo.ArrowType.Null}), and the schema of the rows it answers (no fields
 * unless it is a {@link StatementKind#QUERY}).
 */
public record StatementDescription(StatementKind kind, List<Field> parameters, Schema result) {
  public StatementDescription {
    Objects.requireNonNull(kind, "kind");
    parameters = List.copyOf(parameters);
    Objects.requireNonNull(result, "result");
  }

  /** How many placeholders the statement has. */
  public int parameterCount() {
    return parameters.size();
  }
}
