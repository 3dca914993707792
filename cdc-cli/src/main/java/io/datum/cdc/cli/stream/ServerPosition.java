package io.datum.cdc.cli.stream;

import io.datum.cdc.CdcConnectionException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.cli.common.ServerFailures;
import io.datum.cdc.core.errors.PgErrors;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's WAL position as a logical walsender can send it: {@code pg_current_wal_flush_lsn()}
 * on a primary, {@code pg_last_wal_replay_lsn()} on a standby (PostgreSQL docs, 9.28.4), read over
 * a short ordinary connection. A walsender that has sent everything up to this position reports at
 * least it in its next keepalive, and an idle source then confirms it. On a standby given its
 * primary ({@code --primary-url}), the primary's {@code pg_current_wal_flush_lsn()} instead: what
 * the primary has committed, which the standby's stream reaches once replayed ({@code --stop-at-lsn
 * current} and {@code --idle-exit} then wait for the standby to catch up); the standby's own
 * position while the primary cannot be reached.
 */
final class ServerPosition {

  private static final Logger LOG = LoggerFactory.getLogger(ServerPosition.class);

  private final String jdbcUrl;
  private final String primaryUrl;
  private final Properties properties;

  /**
   * @param jdbcUrl the source's JDBC URL
   * @param primaryUrl the primary's JDBC URL when {@code jdbcUrl} may be a standby, or null
   * @param user the role, or null for the URL's
   * @param password the password, or null for the URL's
   */
  ServerPosition(String jdbcUrl, String primaryUrl, String user, String password) {
    this.jdbcUrl = jdbcUrl;
    this.primaryUrl = primaryUrl;
    this.properties = new Properties();
    if (user != null) {
      properties.setProperty("user", user);
    }
    if (password != null) {
      properties.setProperty("password", password);
    }
    properties.setProperty("ApplicationName", "pgcdc position");
  }

  /**
   * Reads the position.
   *
   * @return the position
   * @throws CdcConnectionException if the server cannot be asked right now, naming the URL without
   *     password
   * @throws io.datum.cdc.CdcConfigurationException if retrying cannot fix it (authentication, a
   *     missing database): {@link ServerFailures#classify}
   */
  PgLsn read() {
    PgLsn own;
    boolean standby;
    try (Connection c = DriverManager.getConnection(jdbcUrl, properties);
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()"
                    + " ELSE pg_current_wal_flush_lsn() END)::text, pg_is_in_recovery()")) {
      rs.next();
      own = PgLsn.parse(rs.getString(1));
      standby = rs.getBoolean(2);
    } catch (SQLException e) {
      throw ServerFailures.classify(
          "cannot read the WAL position of " + PgErrors.redact(jdbcUrl), e, null);
    }
    if (!standby || primaryUrl == null) {
      return own;
    }
    try (Connection c = DriverManager.getConnection(primaryUrl, properties);
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_current_wal_flush_lsn()::text")) {
      rs.next();
      return PgLsn.parse(rs.getString(1));
    } catch (SQLException e) {
      LOG.warn(
          "cannot read the primary's WAL position at {} ({}): using the standby's replay position"
              + " {}, which changes the primary committed but the standby has not replayed are"
              + " beyond",
          PgErrors.redact(primaryUrl),
          e.getMessage(),
          own);
      return own;
    }
  }

  /**
   * Reads the position, or returns null (logged) if the server cannot be asked right now.
   *
   * @return the position, or null
   */
  PgLsn flushLsn() {
    try {
      return read();
    } catch (CdcConnectionException e) {
      LOG.info("not idle yet: {}", e.getMessage());
      return null;
    }
  }
}
