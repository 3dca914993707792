package io.datum.cdc.cli.common;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcConnectionException;
import io.datum.cdc.CdcException;
import io.datum.cdc.core.errors.PgErrors;
import java.sql.SQLException;

/**
 * The failures of pgcdc's one-shot commands (status, slot drop, snapshot, the server's position),
 * classified as the library classifies them ({@code PgErrors}, by SQLSTATE: PostgreSQL docs,
 * Appendix A): what retrying cannot fix is a {@link CdcConfigurationException} (exit 2) naming the
 * remedy in pgcdc's options; only a fault of the connection says the server could not be reached.
 */
public final class ServerFailures {

  private ServerFailures() {}

  /**
   * Classifies a failure of a command's JDBC work.
   *
   * @param what what was being done, naming the URL without its password ("cannot read the state of
   *     slot \"s\" at jdbc:postgresql://db/shop")
   * @param e the failure, not null
   * @param privilegeRemedy the statement that gives the role what it lacks, for SQLSTATE 42501
   *     (insufficient_privilege); null for a generic remedy
   * @return a {@link CdcConfigurationException} for an authentication failure, a missing privilege
   *     or database, or a server limit; a {@link CdcConnectionException} for a fault that may pass,
   *     saying that the server could not be reached only for a fault of the connection (class 08
   *     but 08004; 57P01..57P03 say the server is shutting down or starting up, class 53 but 53400
   *     that it is short of a resource); otherwise the library's mapping (a refusal naming its
   *     SQLSTATE)
   */
  public static CdcException classify(String what, SQLException e, String privilegeRemedy) {
    String state = e.getSQLState() == null ? "" : e.getSQLState();
    if (PgErrors.isAuthenticationFailure(e)) {
      return new CdcConfigurationException(
          what
              + ": "
              + e.getMessage()
              + " [SQLSTATE "
              + state
              + "]: authentication failed, which retrying cannot fix; check --user and the"
              + " password (--password-env VAR, --password-file FILE, or ~/.pgpass) and the"
              + " server's pg_hba.conf",
          e);
    }
    if (state.equals("42501")) {
      return new CdcConfigurationException(
          what
              + ": "
              + e.getMessage()
              + " [SQLSTATE 42501]: the role lacks a privilege, which retrying cannot fix; "
              + (privilegeRemedy != null
                  ? privilegeRemedy
                  : "grant it to the role, or give --user a role that has it"),
          e);
    }
    CdcException mapped = PgErrors.map(what, e);
    if (PgErrors.isPermanent(e)) {
      return mapped instanceof CdcConfigurationException
          ? mapped
          : new CdcConfigurationException(mapped.getMessage(), e);
    }
    if (mapped instanceof CdcConnectionException) {
      return new CdcConnectionException(
          mapped.getMessage()
              + (state.isEmpty() ? "" : " [SQLSTATE " + state + "]")
              + " ("
              + whyTransient(e)
              + ")",
          e);
    }
    return mapped;
  }

  /**
   * Says what a fault that may pass is, by the first SQLSTATE in its cause chain: the server
   * shutting down or starting up (57P01..57P03), short of a resource (class 53: too many
   * connections, out of memory, disk full), or otherwise not reached (class 08, or no SQLSTATE).
   *
   * @param e a transient failure, not null
   * @return the phrase, without a final period
   */
  public static String whyTransient(Throwable e) {
    String state = "";
    for (Throwable t = e; t != null && state.isEmpty(); t = t.getCause()) {
      if (t instanceof SQLException sql && sql.getSQLState() != null) {
        state = sql.getSQLState();
      }
      if (t == t.getCause()) {
        break;
      }
    }
    if (state.startsWith("57P")) {
      return "the server is shutting down or starting up: it may accept connections again soon";
    }
    if (state.startsWith("53")) {
      return "the server is short of a resource (connections, memory, disk): it may have some"
          + " again soon";
    }
    return "the server could not be reached: check that it runs and the URL";
  }
}
