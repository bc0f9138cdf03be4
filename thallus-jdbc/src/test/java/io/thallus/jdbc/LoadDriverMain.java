package io.thallus.jdbc;

import java.sql.Driver;
import java.sql.DriverManager;
import java.util.Collections;

/** Loads every JDBC driver on the class path, as DriverManager does for a tool, and names them; nothing else. */
public final class LoadDriverMain {
  private LoadDriverMain() {}

  public static void main(String[] args) {
    for (Driver driver : Collections.list(DriverManager.getDrivers())) {
      System.out.println("driver " + driver.getClass().getName());
    }
  }
}
