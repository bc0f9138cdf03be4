package io.thallus.internal.client;

import io.thallus.DatasetDescription;
import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Which server holds which file of a dataset spread over several servers, from each server's description: a file
 * is known by its id (its path under the data root), and servers that describe one id with one checksum hold
 * replicas of it. One id with two checksums is two different files under one name, and no layout: the read fails
 * naming both servers and the file. Servers are known by their index in the order the read was given them.
 */
public final class ShardLayout {
  private final List<String> servers;
  /** Each file's id to the servers holding it, in the servers' order. */
  private final Map<String, List<Integer>> holders;

  private ShardLayout(List<String> servers, Map<String, List<Integer>> holders) {
    this.servers = servers;
    this.holders = holders;
  }

  /**
   * The layout of {@code descriptions}, one per server (in the order of {@code servers}, which name them in
   * errors), each of kind FILES with an id and checksum on every file.
   */
  public static ShardLayout of(List<String> servers, List<DatasetDescription> descriptions) {
    Map<String, List<Integer>> holders = new TreeMap<>();
    Map<String, DatasetDescription.FilePart> first = new LinkedHashMap<>();
    Map<String, Integer> firstServer = new LinkedHashMap<>();
    for (int server = 0; server < descriptions.size(); server++) {
      DatasetDescription description = descriptions.get(server);
      if (description.kind() != DatasetDescription.Kind.FILES) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "server " + servers.get(server) + " describes the "
            + "dataset as a " + description.kind() + ", not files: a sharded read reads a dataset of files");
      }
      for (DatasetDescription.Part part : description.parts()) {
        DatasetDescription.FilePart file = (DatasetDescription.FilePart) part;
        if (file.id().isEmpty() || file.checksum().isEmpty()) {
          throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "server " + servers.get(server) + " gives file "
              + file.path() + " no id or checksum (a server from before sharded reads), so its replicas cannot be "
              + "told from different files");
        }
        DatasetDescription.FilePart seen = first.putIfAbsent(file.id(), file);
        if (seen == null) {
          firstServer.put(file.id(), server);
        } else if (!seen.checksum().equals(file.checksum())) {
          throw ThallusException.of(StatusCode.FAILED_PRECONDITION, "file " + file.id() + " differs between servers "
              + servers.get(firstServer.get(file.id())) + " (" + seen.bytes() + " bytes, checksum "
              + seen.checksum() + ") and " + servers.get(server) + " (" + file.bytes() + " bytes, checksum "
              + file.checksum() + "): the same part id with different contents");
        }
        List<Integer> list = holders.computeIfAbsent(file.id(), id -> new ArrayList<>());
        if (!list.contains(server)) {
          list.add(server);
        }
      }
    }
    return new ShardLayout(List.copyOf(servers), holders);
  }

  /** Every file's id, in id order. */
  public Set<String> ids() {
    return holders.keySet();
  }

  /** The servers holding {@code id}, in the servers' order. */
  public List<Integer> holders(String id) {
    return List.copyOf(holders.getOrDefault(id, List.of()));
  }

  /**
   * Each file read once, from the first server holding it that is not in {@code down}: server index to the ids it
   * reads, in id order (servers that read nothing are absent). A file no live server holds fails UNAVAILABLE naming
   * the down server(s) that hold it and the file.
   */
  public Map<Integer, List<String>> assign(Set<Integer> down) {
    Map<Integer, List<String>> reads = new TreeMap<>();
    for (Map.Entry<String, List<Integer>> entry : holders.entrySet()) {
      Integer reader = entry.getValue().stream().filter(server -> !down.contains(server)).findFirst().orElse(null);
      if (reader == null) {
        List<String> names = entry.getValue().stream().map(servers::get).toList();
        throw ThallusException.of(StatusCode.UNAVAILABLE, "server " + String.join(" and ", names) + " is down and "
            + "no live server holds a replica of its file " + entry.getKey());
      }
      reads.computeIfAbsent(reader, server -> new ArrayList<>()).add(entry.getKey());
    }
    return reads;
  }
}
