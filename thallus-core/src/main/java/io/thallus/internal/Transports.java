package io.thallus.internal;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import io.thallus.spi.Transport;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/** The transports on the class path, found with {@link ServiceLoader}, best first. */
public final class Transports {
  private Transports() {}

  public static List<Transport> available() {
    List<Transport> found = new ArrayList<>();
    for (Transport transport : ServiceLoader.load(Transport.class, Transports.class.getClassLoader())) {
      found.add(transport);
    }
    found.sort(Comparator.comparingInt(Transport::preference).reversed());
    return found;
  }

  /** The named transports, or all of them for an empty list; an unknown name is an error that lists the known. */
  public static List<Transport> enabled(List<String> names) {
    List<Transport> all = available();
    if (names.isEmpty()) {
      return all;
    }
    List<Transport> chosen = new ArrayList<>();
    for (String name : names) {
      chosen.add(byName(all, name));
    }
    chosen.sort(Comparator.comparingInt(Transport::preference).reversed());
    return chosen;
  }

  public static Transport byName(String name) {
    return byName(available(), name);
  }

  private static Transport byName(List<Transport> all, String name) {
    return all.stream().filter(t -> t.name().equals(name)).findFirst()
        .orElseThrow(() -> ThallusException.of(StatusCode.NOT_FOUND, "unknown transport " + name
            + "; available: " + all.stream().map(Transport::name).toList()));
  }
}
