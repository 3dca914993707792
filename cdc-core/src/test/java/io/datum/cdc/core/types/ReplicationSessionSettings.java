package io.datum.cdc.core.types;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** Session settings for tests that compare a value's text output with its binary form. */
final class ReplicationSessionSettings {

  private ReplicationSessionSettings() {}

  /**
   * Sets the replication connection's value formats (see ReplicationLoop and PgTextValues), plus a
   * time zone with half-hour and historical second offsets and a fixed monetary locale.
   */
  static void apply(Connection connection) throws SQLException {
    try (Statement s = connection.createStatement()) {
      s.execute("SET DateStyle = ISO");
      s.execute("SET extra_float_digits = 3");
      s.execute("SET IntervalStyle = iso_8601");
      s.execute("SET bytea_output = hex");
      s.execute("SET TimeZone = 'Europe/Amsterdam'");
      s.execute("SET lc_monetary = 'C'");
    }
  }
}
