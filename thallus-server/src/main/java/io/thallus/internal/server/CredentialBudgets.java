package io.thallus.internal.server;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Arrow budget per credential, under the server's: every connection of a credential (Flight SQL sessions among
 * them) makes its own allocator ({@code memoryPerClient}) inside its credential's, and a stream asks the engine for
 * its next batch only while its credential's connections together hold less than {@code maxMemoryPerCredential}, so
 * the clients of one credential cannot take the server's whole budget from the others however many connections they
 * open. Everything a connection holds for its client is allocated or accounted in its allocator: batches, frames,
 * ingested bodies, the transport's shm segments and rdma buffers. The credential's share is kept by waiting (streams
 * before their next batch, ingests before granting more credits), not by an allocator limit, so that a connection's
 * transport is never refused the memory for a batch already made. Streams of one credential that check at the same
 * moment may pass it by a batch each (at most {@code maxStatementsPerCredential} batches). A server that checks no
 * credentials has one budget, the server's.
 */
public final class CredentialBudgets {
  private static final Logger LOG = LoggerFactory.getLogger(CredentialBudgets.class);
  /** The name of each credential's allocator starts so. */
  public static final String PREFIX = "thallus-credential-";
  private final BufferAllocator server;
  private final long perCredential;
  /** Guarded by this. */
  private final Map<String, Budget> budgets = new HashMap<>();
  /** Each budget's allocator gets a name of its own, for the error that names a leak. */
  private final AtomicLong names = new AtomicLong();

  private static final class Budget {
    final BufferAllocator allocator;
    int holders;

    Budget(BufferAllocator allocator) {
      this.allocator = allocator;
    }
  }

  public CredentialBudgets(BufferAllocator server, long perCredential) {
    this.server = server;
    this.perCredential = perCredential;
  }

  /**
   * The budget a connection of {@code credential} makes its own inside; null takes the server's. Each take is given
   * back once, after the connection's own allocator has closed.
   */
  synchronized BufferAllocator take(String credential) {
    if (credential == null) {
      return server;
    }
    Budget budget = budgets.computeIfAbsent(credential, c -> new Budget(
        server.newChildAllocator(PREFIX + names.incrementAndGet(), 0, server.getLimit())));
    budget.holders++;
    return budget.allocator;
  }

  /** Gives back a {@link #take}; the credential's budget closes with its last connection. */
  synchronized void giveBack(String credential) {
    if (credential == null) {
      return;
    }
    Budget budget = budgets.get(credential);
    if (budget != null && --budget.holders == 0) {
      budgets.remove(credential);
      try {
        budget.allocator.close();
      } catch (IllegalStateException leak) {
        // A connection that leaked (logged as it closed) leaves its allocator under this one; the server's close
        // reports it again. Thrown here, it would escape the event loop task that closes connections.
        LOG.error("the memory budget of a credential closed with memory outstanding: {}", leak.getMessage());
      }
    }
  }

  /** What a connection's next batch may take now: within its own budget, its credential's and the server's. */
  long headroom(BufferAllocator connectionMemory) {
    long room = connectionMemory.getHeadroom();
    BufferAllocator credential = credentialOf(connectionMemory);
    return credential == null ? room : Math.min(room, perCredential - credential.getAllocatedMemory());
  }

  /** The most a connection could ever hold at once: the smallest of the budgets it lies in. */
  long capacity(BufferAllocator connectionMemory) {
    BufferAllocator parent = connectionMemory.getParentAllocator();
    long capacity = connectionMemory.getLimit();
    if (credentialOf(connectionMemory) != null) {
      capacity = Math.min(capacity, perCredential);
      parent = parent.getParentAllocator();
    }
    return parent == null ? capacity : Math.min(capacity, parent.getLimit());
  }

  /** The smallest budget a connection lies in (what makes {@link #capacity}), named as a client reads it. */
  String capacityName(BufferAllocator connectionMemory) {
    BufferAllocator credential = credentialOf(connectionMemory);
    BufferAllocator server = credential == null ? connectionMemory.getParentAllocator()
        : credential.getParentAllocator();
    long own = connectionMemory.getLimit();
    long shared = credential == null ? Long.MAX_VALUE : perCredential;
    long all = server == null ? Long.MAX_VALUE : server.getLimit();
    if (own <= shared && own <= all) {
      return "this client's memory budget (memoryPerClient)";
    }
    return shared <= all ? "this credential's memory budget (maxMemoryPerCredential)"
        : "the server's memory budget (memoryLimit)";
  }

  /** The budget that leaves a connection the least room now, named as a client reads it in an error. */
  String budgetName(BufferAllocator connectionMemory) {
    BufferAllocator credential = credentialOf(connectionMemory);
    BufferAllocator server = credential == null ? connectionMemory.getParentAllocator()
        : credential.getParentAllocator();
    long own = connectionMemory.getLimit() - connectionMemory.getAllocatedMemory();
    long shared = credential == null ? Long.MAX_VALUE : perCredential - credential.getAllocatedMemory();
    long all = server == null ? Long.MAX_VALUE : server.getLimit() - server.getAllocatedMemory();
    if (own <= shared && own <= all) {
      return "this client's memory budget (memoryPerClient, " + connectionMemory.getLimit() + " bytes)";
    }
    if (shared <= all) {
      return "this credential's memory budget (maxMemoryPerCredential, " + perCredential
          + " bytes, shared by all its connections)";
    }
    return "the server's memory budget (memoryLimit, " + server.getLimit() + " bytes)";
  }

  /**
   * What each connection in {@code connectionMemory}'s budget holds now, largest first (at most 8), for the log line
   * that says why a stream found no room: which of a credential's connections hold its share.
   */
  String holders(BufferAllocator connectionMemory) {
    BufferAllocator budget = connectionMemory.getParentAllocator();
    if (budget == null) {
      return "";
    }
    return budget.getChildAllocators().stream()
        .sorted(java.util.Comparator.comparingLong(BufferAllocator::getAllocatedMemory).reversed()).limit(8)
        .map(child -> child.getName() + "=" + child.getAllocatedMemory())
        .collect(java.util.stream.Collectors.joining(", ", budget.getName() + " holds " + budget.getAllocatedMemory()
            + " bytes of " + perCredential + " in " + budget.getChildAllocators().size() + " connections: ", ""));
  }

  private static BufferAllocator credentialOf(BufferAllocator connectionMemory) {
    BufferAllocator parent = connectionMemory.getParentAllocator();
    return parent != null && parent.getName().startsWith(PREFIX) ? parent : null;
  }
}
