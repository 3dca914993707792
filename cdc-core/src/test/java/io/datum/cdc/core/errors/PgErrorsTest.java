package io.datum.cdc.core.errors;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcConnectionException;
import io.datum.cdc.CdcException;
import io.datum.cdc.CdcReplicationException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

/**
 * The classification of failures by what retrying can heal, on pgjdbc's own exceptions with the
 * SQLSTATEs and messages pgjdbc 42.7 raises (ConnectionFactoryImpl for a missing password).
 */
class PgErrorsTest {

  @Test
  void aMissingPasswordIsAConfigurationErrorNamingWhereThePasswordGoes() {
    PSQLException noPassword =
        new PSQLException(
            "The server requested SCRAM-based authentication, but no password was provided.",
            PSQLState.CONNECTION_REJECTED);
    CdcException e = PgErrors.map("cannot connect", noPassword);
    assertInstanceOf(CdcConfigurationException.class, e);
    assertTrue(
        e.getMessage().contains("no password was provided")
            && e.getMessage().contains("authentication failed")
            && e.getMessage().contains("--password-env"),
        e.getMessage());
    assertFalse(e.getMessage().contains("could not be reached"), e.getMessage());
    assertTrue(PgErrors.isPermanent(noPassword));
  }

  @Test
  void aWrongPasswordOrARoleThatCannotLogInIsPermanent() {
    PSQLException wrong =
        new PSQLException(
            "FATAL: password authentication failed for user \"cdc\"", PSQLState.INVALID_PASSWORD);
    assertInstanceOf(CdcConfigurationException.class, PgErrors.map("cannot connect", wrong));
    assertTrue(PgErrors.isPermanent(wrong));
  }

  @Test
  void anUnknownHostIsNamedAndALostConnectionStaysRetryable() {
    PSQLException unknown =
        new PSQLException(
            "The connection attempt failed.",
            PSQLState.CONNECTION_UNABLE_TO_CONNECT,
            new UnknownHostException("db.example.invalid"));
    CdcException e = PgErrors.map("cannot connect", unknown);
    assertInstanceOf(CdcConnectionException.class, e);
    assertTrue(e.getMessage().contains("unknown host db.example.invalid"), e.getMessage());
    PSQLException lost = new PSQLException("An I/O error occurred", PSQLState.CONNECTION_FAILURE);
    assertInstanceOf(CdcConnectionException.class, PgErrors.map("streaming", lost));
    assertFalse(PgErrors.isPermanent(lost));
  }

  @Test
  void aMissingPrivilegeIsPermanentAndADroppedTableIsNot() {
    assertTrue(
        PgErrors.isPermanent(new SQLException("ERROR: permission denied for table t", "42501")));
    assertFalse(
        PgErrors.isPermanent(new SQLException("ERROR: relation \"t\" does not exist", "42P01")));
    assertTrue(
        PgErrors.isPermanent(new SQLException("ERROR: all replication slots are in use", "53400")));
  }

  @Test
  void aMissingDatabaseIsAConfigurationErrorAndAServerRestartIsTransient() {
    SQLException noDatabase = new SQLException("FATAL: database \"nope\" does not exist", "3D000");
    CdcException e = PgErrors.map("cannot connect", noDatabase);
    assertInstanceOf(CdcConfigurationException.class, e);
    assertTrue(e.getMessage().contains("check its name"), e.getMessage());
    assertFalse(PgErrors.isTransient(e));
    for (String state : new String[] {"57P01", "57P02", "57P03", "53300", "08006", "08001"}) {
      CdcException restart = PgErrors.map("streaming", new SQLException("FATAL", state));
      assertInstanceOf(CdcConnectionException.class, restart, state);
      assertTrue(PgErrors.isTransient(restart), state);
    }
    for (String state : new String[] {"57P04", "08004", "53400", "42501", "28P01"}) {
      CdcException permanent = PgErrors.map("streaming", new SQLException("FATAL", state));
      assertFalse(PgErrors.isTransient(permanent), state);
      assertTrue(PgErrors.isPermanent(permanent), state);
    }
  }

  @Test
  void onlyAnActiveSlotIsATransientRefusal() {
    assertTrue(
        PgErrors.isTransient(
            new CdcReplicationException(CdcReplicationException.Reason.SLOT_ACTIVE, "active")));
    assertFalse(
        PgErrors.isTransient(
            new CdcReplicationException(CdcReplicationException.Reason.SLOT_MISSING, "missing")));
    assertFalse(PgErrors.isTransient(new IllegalStateException("a handler's own failure")));
  }

  @Test
  void aMissingPrivilegeNamesWhichOneWhenTheServerSays() {
    // walsender.c on 14-15, and 16+ (with its DETAIL), postinit.c, publicationcmds.c
    String[][] cases = {
      {"FATAL: must be superuser or replication role to start walsender", "WITH REPLICATION"},
      {"FATAL: permission denied to start WAL sender", "WITH REPLICATION"},
      {
        "FATAL: permission denied for database \"shop\"\n  Detail: User does not have CONNECT"
            + " privilege.",
        "GRANT CONNECT ON DATABASE"
      },
      {"ERROR: permission denied for database shop", "GRANT CREATE ON DATABASE"},
      {"ERROR: must be owner of table t", "as their owner"},
    };
    for (String[] c : cases) {
      CdcException e = PgErrors.map("cannot start", new SQLException(c[0], "42501"));
      assertInstanceOf(CdcReplicationException.class, e);
      assertTrue(
          e.getMessage().contains("[SQLSTATE 42501]: ") && e.getMessage().contains(c[1]),
          e.getMessage());
    }
    CdcException plain =
        PgErrors.map(
            "cannot read", new SQLException("ERROR: permission denied for table t", "42501"));
    assertTrue(plain.getMessage().endsWith("[SQLSTATE 42501]"), plain.getMessage());
  }
}
