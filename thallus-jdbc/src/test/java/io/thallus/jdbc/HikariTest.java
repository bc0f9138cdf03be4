package io.thallus.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.thallus.testing.ChildJvm;
import io.thallus.testing.ServeProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * HikariCP as an application runs it: a pool of 10, 20 threads committing and rolling back transactions, and the
 * server killed (SIGKILL) and restarted on its database file in the middle. No committed row is lost, no rolled-back
 * row shows, callers see connection errors (SQLState 08xxx) while the server is down, and the pool recovers.
 */
@Timeout(600)
class HikariTest {
  private static final int THREADS = 20;

  @TempDir
  Path work;

  @Test
  void transactionsThroughAPoolSurviveAServerKillAndRestart() throws Exception {
    Path root = Files.createDirectories(work.resolve("root"));
    Path database = work.resolve("pool.duckdb");
    int port = ServeProcess.freePort();
    ChildJvm serve = ServeProcess.start(root, database, port);
    String url = ServeProcess.jdbcUrl(serve);
    try (Connection connection = DriverManager.getConnection(url); Statement statement = connection.createStatement()) {
      statement.execute("CREATE TABLE ledger (id INTEGER PRIMARY KEY, worker INTEGER, amount INTEGER)");
    }
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(10);
    // A borrower waits out the restart (JVM start included) rather than the pool's own timeout.
    config.setConnectionTimeout(15_000);
    config.setValidationTimeout(1_000);
    Set<Integer> committed = ConcurrentHashMap.newKeySet();
    Set<Integer> rolledBack = ConcurrentHashMap.newKeySet();
    Set<Integer> uncertain = ConcurrentHashMap.newKeySet();
    Set<String> errorStates = ConcurrentHashMap.newKeySet();
    List<String> unexpected = new java.util.concurrent.CopyOnWriteArrayList<>();
    AtomicInteger nextId = new AtomicInteger();
    AtomicBoolean restarted = new AtomicBoolean();
    java.util.concurrent.atomic.AtomicReference<String> phase = new java.util.concurrent.atomic.AtomicReference<>("up");
    AtomicInteger[] afterRestart = new AtomicInteger[THREADS];
    try (HikariDataSource pool = new HikariDataSource(config)) {
      ExecutorService threads = Executors.newFixedThreadPool(THREADS);
      List<Future<?>> workers = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int worker = t;
        afterRestart[t] = new AtomicInteger();
        workers.add(threads.submit(() -> {
          while (afterRestart[worker].get() < 10) {
            int id = nextId.incrementAndGet();
            boolean keep = id % 3 != 0;
            boolean committing = false;
            long began = System.nanoTime();
            String step = "borrow";
            try (Connection connection = pool.getConnection()) {
              step = "insert";
              connection.setAutoCommit(false);
              try (PreparedStatement insert = connection.prepareStatement("INSERT INTO ledger VALUES (?, ?, ?)")) {
                insert.setInt(1, id);
                insert.setInt(2, worker);
                insert.setInt(3, id * 10);
                insert.executeUpdate();
              }
              step = "end";
              if (keep) {
                committing = true;
                connection.commit();
                committed.add(id);
              } else {
                connection.rollback();
                rolledBack.add(id);
              }
              if (restarted.get()) {
                afterRestart[worker].incrementAndGet();
              }

            } catch (SQLException e) {
              if (committing) {
                // The commit may or may not have reached the server before it died.
                uncertain.add(id);
              }
              String state = e.getSQLState();
              errorStates.add(String.valueOf(state));
              // The pool's borrow timeout (15 s, which a restart on a loaded machine may take) is the pool's own
              // connection error: a SQLTransientConnectionException whose SQLState is that of the last failure the
              // pool saw, often none.
              boolean borrowTimedOut = step.equals("borrow") && e instanceof SQLTransientConnectionException;
              if (!borrowTimedOut && (state == null || !state.startsWith("08"))) {
                unexpected.add("while " + phase.get() + ", at " + step + " after "
                    + (System.nanoTime() - began) / 1_000_000 + " ms: " + state + ": " + e);
              }
              sleep(50);
            }
          }
          return null;
        }));
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (committed.size() < 200 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(committed).as("transactions committed before the kill; errors: %s", unexpected)
          .hasSizeGreaterThanOrEqualTo(200);
      phase.set("killing");
      serve.kill();
      phase.set("down");
      Thread.sleep(1_500);
      serve = ServeProcess.start(root, database, port);
      ServeProcess.jdbcUrl(serve);
      phase.set("restarted");
      restarted.set(true);
      for (Future<?> each : workers) {
        each.get(300, TimeUnit.SECONDS);
      }
      threads.shutdown();
    } finally {
      serve.close();
    }
    assertThat(unexpected).as("errors other than connection errors").isEmpty();
    assertThat(errorStates).as("callers saw the server go down").isNotEmpty();
    serve = ServeProcess.start(root, database, port);
    try (Connection connection = DriverManager.getConnection(ServeProcess.jdbcUrl(serve));
         Statement statement = connection.createStatement();
         var rows = statement.executeQuery("SELECT id, amount FROM ledger")) {
      Set<Integer> present = new HashSet<>();
      while (rows.next()) {
        present.add(rows.getInt(1));
        assertThat(rows.getInt(2)).isEqualTo(rows.getInt(1) * 10);
      }
      assertThat(present).as("every committed row").containsAll(committed);
      assertThat(present).as("no rolled-back row").doesNotContainAnyElementsOf(rolledBack);
      Set<Integer> unexplained = new HashSet<>(present);
      unexplained.removeAll(committed);
      unexplained.removeAll(uncertain);
      assertThat(unexplained).as("rows neither committed nor in doubt").isEmpty();
    } finally {
      serve.close();
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
