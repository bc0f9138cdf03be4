package io.thallus.internal.server;

import io.thallus.DatasetDescription;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.engine.CancelSignal;
import io.thallus.engine.EngineSession;
import io.thallus.server.ShardDeclaration;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The parts of sharded datasets this server holds, as its settings declare them ({@link ShardDeclaration}), each
 * path checked inside the data root at start. A DESCRIBE of a declared name (with no dataset) is answered here, not
 * from the engine's catalog: {@link DatasetDescription.Kind#SHARD} with each part's id, checksum
 * ({@link PartChecksum}), the path a query reads it by, its bytes and rows (the engine describes the part's files).
 */
public final class ServerShards {
  /** A server that declares none. */
  public static final ServerShards NONE = new ServerShards(Map.of());

  /** Declared parts by lowercase dataset name, names and parts in declaration order. */
  private final Map<String, List<LocalPart>> parts;

  private record LocalPart(ShardDeclaration declaration, Path resolved, String relative) {}

  private ServerShards(Map<String, List<LocalPart>> parts) {
    this.parts = parts;
  }

  /**
   * The declarations checked: each path resolved inside {@code dataRoot} (a server that declares parts needs one),
   * and no part id declared twice for one name.
   */
  public static ServerShards of(List<ShardDeclaration> declarations, Optional<DataRoot> dataRoot) {
    if (declarations.isEmpty()) {
      return NONE;
    }
    DataRoot root = dataRoot.orElseThrow(() -> ThallusException.of(StatusCode.INVALID_ARGUMENT,
        "the server declares parts of sharded datasets but has no data root to hold them"));
    Map<String, List<LocalPart>> parts = new LinkedHashMap<>();
    Set<String> seen = new HashSet<>();
    for (ShardDeclaration declaration : declarations) {
      String key = declaration.name().toLowerCase(Locale.ROOT);
      if (!seen.add(key + "/" + declaration.partId())) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "part " + declaration.partId() + " of sharded dataset "
            + declaration.name() + " is declared twice");
      }
      Path resolved = root.resolve(declaration.path());
      String relative = root.path().relativize(resolved.normalize()).toString();
      parts.computeIfAbsent(key, k -> new ArrayList<>()).add(new LocalPart(declaration, resolved, relative));
    }
    return new ServerShards(java.util.Collections.unmodifiableMap(parts));
  }

  /** The names of the declared sharded datasets, in declaration order, each as first declared. */
  public List<String> names() {
    return parts.values().stream().map(declared -> declared.get(0).declaration().name()).toList();
  }

  /** Whether a DESCRIBE of {@code name} with {@code dataset} is one of a declared sharded dataset. */
  boolean declares(String name, Optional<Path> dataset) {
    return dataset.isEmpty() && parts.containsKey(name.toLowerCase(Locale.ROOT));
  }

  /**
   * The declared dataset's parts here, described by {@code session} (each part's files bound as a dataset) and
   * checksummed from their files. Parts must agree on the schema: one that differs is an error naming both parts.
   */
  DatasetDescription describe(String name, EngineSession session, BufferAllocator allocator, CancelSignal cancel) {
    List<DatasetDescription.Part> described = new ArrayList<>();
    Schema schema = null;
    String schemaPart = null;
    for (LocalPart part : parts.get(name.toLowerCase(Locale.ROOT))) {
      DatasetDescription files = session.describe("dataset", Optional.of(part.resolved()), allocator, cancel);
      if (files.kind() != DatasetDescription.Kind.FILES) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "part " + part.declaration().partId() + " of "
            + name + " at " + part.relative() + " is not files (a " + files.kind() + ")");
      }
      if (schema == null) {
        schema = files.schema();
        schemaPart = part.declaration().partId();
      } else if (!schema.equals(files.schema())) {
        throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "parts " + schemaPart + " and "
            + part.declaration().partId() + " of sharded dataset " + name + " have different schemas: " + schema
            + " and " + files.schema());
      }
      long bytes = files.parts().stream().mapToLong(DatasetDescription.Part::bytes).sum();
      String checksum = PartChecksum.of(part.resolved(), files.parts());
      described.add(new DatasetDescription.ShardPart(part.declaration().partId(), checksum, part.relative(), bytes,
          files.rows()));
    }
    return new DatasetDescription(DatasetDescription.Kind.SHARD, schema, described);
  }
}
