package io.datum.cdc.core.errors;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcConnectionException;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.CdcReplicationException.Reason;
import java.net.UnknownHostException;
import java.sql.SQLException;

/**
 * Maps JDBC failures to the {@link CdcException} hierarchy by SQLSTATE (PostgreSQL docs, Appendix
 * A, PostgreSQL Error Codes).
 */
public final class PgErrors {

  private PgErrors() {}

  /**
   * @param what what was being done, for the message ("starting replication from slot s")
   * @param e the failure
   * @return a configuration exception for an authentication failure ({@link
   *     #isAuthenticationFailure}); a replication exception for a server refusal; a connection
   *     exception otherwise (naming an unknown host)
   */
  public static CdcException map(String what, SQLException e) {
    String state = e.getSQLState() == null ? "" : e.getSQLState();
    String message = what + ": " + e.getMessage();
    if (state.equals("53400")) {
      // configuration_limit_exceeded ("all replication slots are in use"): the server refuses for
      // as long as its configuration stays; not a lost connection, not worth retrying
      return new CdcReplicationException(
          Reason.SERVER_ERROR,
          message
              + " [SQLSTATE 53400]: a server limit is reached (this is not a lost connection);"
              + " for \"all replication slots are in use\", drop slots no longer used (SELECT"
              + " slot_name FROM pg_replication_slots WHERE NOT active) or raise"
              + " max_replication_slots (a server restart)",
          e);
    }
    if (isAuthenticationFailure(e)) {
      // class 28, or pgjdbc's own refusal when the server asks for a password and none was given
      // (08004 CONNECTION_REJECTED, ConnectionFactoryImpl): retrying cannot fix either
      return new CdcConfigurationException(
          message
              + " [SQLSTATE "
              + state
              + "]: authentication failed, which retrying cannot fix; check the role, its password"
              + " (the builder's password(...); pgcdc --password-env VAR or --password-file FILE;"
              + " a .pgpass file, PGPASSFILE; or password= in the JDBC URL) and the server's"
              + " pg_hba.conf",
          e);
    }
    if (state.equals("3D000")) {
      // invalid_catalog_name: the database of the URL does not exist (or was dropped)
      return new CdcConfigurationException(
          message
              + " [SQLSTATE 3D000]: the database named in the JDBC URL does not exist, which"
              + " retrying cannot fix; check its name (SELECT datname FROM pg_database lists them)",
          e);
    }
    UnknownHostException unknownHost = cause(e, UnknownHostException.class);
    if (unknownHost != null) {
      return new CdcConnectionException(
          message + " (unknown host " + unknownHost.getMessage() + ": check the JDBC URL)", e);
    }
    if ((state.startsWith("08") && !state.equals("08004"))
        || state.isEmpty()
        || (state.startsWith("57P") && !state.equals("57P04"))
        || state.startsWith("53")) {
      // connection exception class but 08004 (the server rejected the connection: only a change
      // of configuration helps), admin shutdown / terminated walsender / starting up / idle
      // session timeout (57P01..57P03, 57P05; 57P04 database_dropped is for good), insufficient
      // resources (53xxx but 53400, above: too many connections, out of memory, disk full)
      return new CdcConnectionException(message, e);
    }
    Reason reason =
        switch (state) {
          case "55006" -> Reason.SLOT_ACTIVE; // object_in_use: "replication slot ... is active"
          case "42704" ->
              Reason.SLOT_MISSING; // undefined_object: "replication slot ... does not exist"
          case "42501" -> Reason.PERMISSION_DENIED; // insufficient_privilege
          default -> Reason.SERVER_ERROR;
        };
    return new CdcReplicationException(
        reason,
        message + " [SQLSTATE " + state + ']' + (state.equals("42501") ? privilegeRemedy(e) : ""),
        e);
  }

  /**
   * The remedy of an insufficient_privilege failure whose server message says which privilege, or
   * "" (the message names the object: a GRANT on it is the remedy). Messages: PostgreSQL's
   * walsender.c / postinit.c / publicationcmds.c, 14-18.
   */
  static String privilegeRemedy(SQLException e) {
    String m = String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT);
    if (m.contains("replication role") || m.contains("wal sender") || m.contains("walsender")) {
      return ": the role needs the REPLICATION attribute (as a superuser: ALTER ROLE <role> WITH"
          + " REPLICATION), or connect as a role that has it";
    }
    if (m.contains("permission denied for database") && m.contains("connect")) {
      return ": GRANT CONNECT ON DATABASE <database> TO <role>";
    }
    if (m.contains("permission denied for database")) {
      return ": CREATE PUBLICATION needs CREATE on the database (GRANT CREATE ON DATABASE"
          + " <database> TO <role>), FOR ALL TABLES a superuser; or create the publication as a"
          + " role that may, and start without creating it";
    }
    if (m.contains("must be owner of")) {
      return ": CREATE PUBLICATION ... FOR TABLE needs the role to own each table; create the"
          + " publication as their owner, and start without creating it";
    }
    return "";
  }

  /**
   * Returns true if the failure is an authentication failure (SQLSTATE class 28: wrong password, no
   * pg_hba.conf entry, role cannot log in; or pgjdbc's SQLSTATE 08004 when the server asks for a
   * password and none was given), which retrying cannot fix.
   *
   * @param e a failure, not null
   * @return true if it or one of its causes is an {@link SQLException} of class 28
   */
  public static boolean isAuthenticationFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql && sql.getSQLState() != null) {
        String state = sql.getSQLState();
        if (state.startsWith("28")
            || (state.equals("08004")
                && sql.getMessage() != null
                && sql.getMessage().contains("no password was provided"))) {
          return true;
        }
      }
    }
    return false;
  }

  private static <T extends Throwable> T cause(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }

  /**
   * Returns true if retrying cannot heal the failure, by the SQLSTATE of it or of a cause
   * (PostgreSQL docs, Appendix A): class 28 invalid authorization, 42501 insufficient_privilege,
   * 3D000 invalid_catalog_name (no such database), 57P04 database_dropped, 53400
   * configuration_limit_exceeded, 08004 sqlserver_rejected_establishment_of_sqlconnection (pgjdbc
   * raises it when no password was given for a server that asks for one). A lost connection (class
   * 08 but 08004), a server shutting down, crashed or starting up (57P01..57P03), too many
   * connections or another shortage of resources (class 53 but 53400), a serialization failure or
   * deadlock (class 40) or a dropped object (which the caller handles) is not.
   *
   * @param e a failure, not null
   * @return true if it is permanent
   */
  public static boolean isPermanent(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql && sql.getSQLState() != null) {
        String state = sql.getSQLState();
        if (state.startsWith("28")
            || state.equals("42501")
            || state.equals("3D000")
            || state.equals("57P04")
            || state.equals("08004")
            || state.equals("53400")) {
          return true;
        }
      }
    }
    return isAuthenticationFailure(e);
  }

  /**
   * Returns true if retrying may heal a failure of the library: a {@link CdcConnectionException}
   * (the server could not be reached, the connection was lost, the server shut down, restarted or
   * had too many connections) whose causes hold no permanent SQLSTATE ({@link #isPermanent}), or a
   * {@link CdcReplicationException} with {@link Reason#SLOT_ACTIVE} (another consumer may let the
   * slot go). Every other failure (authentication, privileges, missing or incompatible objects,
   * configuration, server limits, a handler's own exception) needs an operator.
   *
   * @param e a failure, not null
   * @return true if it or one of its causes is such a failure and none is permanent
   */
  public static boolean isTransient(Throwable e) {
    if (isPermanent(e)) {
      return false;
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof CdcConfigurationException) {
        return false;
      }
      if (t instanceof CdcConnectionException
          || (t instanceof CdcReplicationException r && r.reason() == Reason.SLOT_ACTIVE)) {
        return true;
      }
      if (t == t.getCause()) {
        break;
      }
    }
    return false;
  }

  /**
   * Returns a JDBC URL fit for messages and logs: the value of a {@code password} parameter is
   * replaced by {@code ***}.
   *
   * @param jdbcUrl a JDBC URL
   * @return the URL without its password
   */
  public static String redact(String jdbcUrl) {
    return jdbcUrl.replaceAll("(?i)([?&]password=)[^&]*", "$1***");
  }

  /**
   * Quotes an SQL identifier: wraps it in double quotes and doubles embedded double quotes
   * (PostgreSQL docs, 4.1.1 Identifiers and Key Words).
   *
   * @param identifier the identifier, any characters but NUL
   * @return the quoted identifier
   * @throws IllegalArgumentException if it contains NUL
   */
  public static String quoteIdentifier(String identifier) {
    if (identifier.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("identifier contains NUL: " + identifier);
    }
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }
}
