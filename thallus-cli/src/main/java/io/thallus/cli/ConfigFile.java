package io.thallus.cli;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A command's settings from a Java properties file (the JDK parses it): each key is an option's name without its
 * dashes, each value what the flag would take. It supplies the defaults, so a flag on the command line wins. A key
 * that names no option is an error naming it, so a misspelt setting is never silently ignored.
 */
final class ConfigFile implements CommandLine.IDefaultValueProvider {
  /** Options that make no sense in the file itself. */
  private static final java.util.Set<String> NOT_SETTINGS = java.util.Set.of("config", "help", "version",
      "log-level");

  private final Map<String, String> values;

  private ConfigFile(Map<String, String> values) {
    this.values = values;
  }

  static ConfigFile load(Path file, CommandLine command) {
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      properties.load(reader);
    } catch (IOException e) {
      throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "cannot read the config file " + file + ": " + e, e);
    }
    Map<String, String> known = new TreeMap<>();
    for (OptionSpec option : command.getCommandSpec().options()) {
      String key = key(option);
      if (!NOT_SETTINGS.contains(key)) {
        known.put(key, option.longestName());
      }
    }
    Map<String, String> values = new TreeMap<>();
    for (String key : properties.stringPropertyNames()) {
      if (!known.containsKey(key)) {
        throw ThallusException.of(StatusCode.INVALID_ARGUMENT, "the config file " + file + " names an unknown "
            + "setting '" + key + "'; the settings are " + new TreeSet<>(known.keySet()));
      }
      values.put(key, properties.getProperty(key).strip());
    }
    return new ConfigFile(values);
  }

  private static String key(OptionSpec option) {
    return option.longestName().replaceFirst("^-+", "");
  }

  @Override
  public String defaultValue(CommandLine.Model.ArgSpec argument) {
    return argument instanceof OptionSpec option ? values.get(key(option)) : null;
  }
}
