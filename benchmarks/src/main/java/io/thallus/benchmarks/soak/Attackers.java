package io.thallus.benchmarks.soak;

/**
 * The loopback address each kind of attacker comes from, so that per-address quotas see what a server on a network
 * would: attackers at their own addresses, honest clients at 127.0.0.1 (Linux answers all of 127.0.0.0/8 on lo).
 * Only the native corrupt-batch senders use 127.0.0.1 (the native client picks no local address): four connections.
 */
final class Attackers {
  static final String NATIVE_STRANGERS = "127.0.0.2";
  static final String DATA_STRANGERS = "127.0.0.3";
  static final String FLIGHT_STRANGERS = "127.0.0.4";
  static final String GREEDY = "127.0.0.5";
  static final String NATIVE_HOARDER = "127.0.0.6";
  static final String FLIGHT_HOARDER = "127.0.0.7";
  static final String UNREAD_DOGETS = "127.0.0.8";
  static final String HUGE_MESSAGES = "127.0.0.9";
  static final String CORRUPT_DOPUTS = "127.0.0.10";
  static final String SLOWLORIS = "127.0.0.11";

  private Attackers() {}
}
