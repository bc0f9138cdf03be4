package io.thallus.benchmarks.soak;

import io.thallus.ClientOptions;
import io.thallus.Location;
import io.thallus.ThallusClient;
import io.thallus.ThallusStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * After the soak's kill -9 and restart: every ledger id the server acknowledged before it was killed is in the
 * table. Usage: {@code LedgerCheck HOST PORT TOKEN_FILE LEDGER_FILE}; exits 0 when all are there.
 */
public final class LedgerCheck {
  private LedgerCheck() {}

  public static void main(String[] args) throws Exception {
    String token = Files.readAllLines(Path.of(args[2])).getFirst().strip();
    long acknowledged = Long.parseLong(Files.readString(Path.of(args[3])).strip());
    try (BufferAllocator memory = new RootAllocator();
         ThallusClient client = ThallusClient.connect(memory, Location.of(args[0], Integer.parseInt(args[1])),
             ClientOptions.builder().token(token).build());
         ThallusStream stream = client.query("SELECT count(DISTINCT id) FILTER (WHERE id BETWEEN 1 AND "
             + acknowledged + ") AS present, count(*) AS total FROM ledger")) {
      long present = -1;
      long total = -1;
      while (stream.hasNext()) {
        try (VectorSchemaRoot batch = stream.next()) {
          present = ((BigIntVector) batch.getVector(0)).get(0);
          total = ((BigIntVector) batch.getVector(1)).get(0);
        }
      }
      boolean ok = present == acknowledged && acknowledged > 0;
      System.out.printf("ledger after kill -9 and restart: %d of %d acknowledged ids present (%d rows in all): %s%n",
          present, acknowledged, total, ok ? "LEDGER INTACT" : "LEDGER LOST ROWS");
      System.exit(ok ? 0 : 1);
    }
  }
}
