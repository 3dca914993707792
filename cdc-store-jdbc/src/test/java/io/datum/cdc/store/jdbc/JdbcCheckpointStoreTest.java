package io.datum.cdc.store.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** What the conformance kit does not check: messages, DDL by the application, URI parameters. */
@EmbeddedPostgresTest
class JdbcCheckpointStoreTest {

  private final EmbeddedPostgresServer pg;

  JdbcCheckpointStoreTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void aSecondStoreOnTheTableFailsNamingTheTableAndTheHolder() {
    UrlDataSource holder = new UrlDataSource(pg.jdbcUrl() + "&ApplicationName=holder_app");
    try (JdbcCheckpointStore first =
        JdbcCheckpointStore.builder(holder).table("held_table").open()) {
      first.store(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/10")));
      CdcStoreException e =
          assertThrows(
              CdcStoreException.class,
              () ->
                  JdbcCheckpointStore.builder(new UrlDataSource(pg.jdbcUrl()))
                      .table("held_table")
                      .open());
      assertTrue(e.getMessage().contains("table held_table"), e.getMessage());
      assertTrue(e.getMessage().contains("application_name \"holder_app\""), e.getMessage());
      assertTrue(e.getMessage().contains("PostgreSQL backend "), e.getMessage());
      // another table is another lock
      try (JdbcCheckpointStore other =
          JdbcCheckpointStore.builder(new UrlDataSource(pg.jdbcUrl()))
              .table("other_table")
              .open()) {
        assertEquals(Optional.empty(), other.load("s"));
      }
      assertEquals(
          Optional.of(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/10"))), first.load("s"));
    }
  }

  @Test
  void theLockNamesTheTableItselfNotTheNameAsWritten() throws Exception {
    pg.execute("CREATE SCHEMA appa", "CREATE SCHEMA appb");
    try (JdbcCheckpointStore first =
        JdbcCheckpointStore.builder(new UrlDataSource(pg.jdbcUrl())).table("same_table").open()) {
      // public.same_table is the same table: refused
      CdcStoreException qualified =
          assertThrows(
              CdcStoreException.class,
              () ->
                  JdbcCheckpointStore.builder(new UrlDataSource(pg.jdbcUrl()))
                      .table("public.same_table")
                      .open());
      assertTrue(qualified.getMessage().contains("is in use"), qualified.getMessage());
      // the same name in two other schemas (search_path) is two other tables: both open
      try (JdbcCheckpointStore a =
              JdbcCheckpointStore.builder(new UrlDataSource(pg.jdbcUrl() + "&currentSchema=appa"))
                  .table("same_table")
                  .open();
          JdbcCheckpointStore b =
              JdbcCheckpointStore.builder(new UrlDataSource(pg.jdbcUrl() + "&currentSchema=appb"))
                  .table("same_table")
                  .open()) {
        a.store(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/A")));
        b.store(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/B")));
      }
      assertEquals("1", pg.queryString("SELECT count(*) FROM appa.same_table"));
      assertEquals("1", pg.queryString("SELECT count(*) FROM appb.same_table"));
      assertEquals("0", pg.queryString("SELECT count(*) FROM public.same_table"));
    }
  }

  @Test
  void aWrongTableOrARoleThatCannotWriteFailsTheOpenNamingTheRemedy() throws Exception {
    pg.execute(
        "CREATE TABLE not_checkpoints (slot text PRIMARY KEY, value bytea)",
        "CREATE ROLE ro_role LOGIN",
        JdbcCheckpointStore.ddl("ro_table"),
        "GRANT SELECT ON ro_table TO ro_role");
    CdcStoreException wrong =
        assertThrows(
            CdcStoreException.class,
            () ->
                JdbcCheckpointStore.builder(new UrlDataSource(pg.jdbcUrl()))
                    .table("not_checkpoints")
                    .createTable(false)
                    .open());
    assertTrue(
        wrong.getMessage().contains("the table not_checkpoints is not a checkpoint table")
            && wrong.getMessage().contains("CREATE TABLE IF NOT EXISTS not_checkpoints"),
        wrong.getMessage());
    CdcStoreException readOnly =
        assertThrows(
            CdcStoreException.class,
            () ->
                JdbcCheckpointStore.builder(
                        new UrlDataSource(pg.jdbcUrl().replaceAll("user=[^&]*", "user=ro_role")))
                    .table("ro_table")
                    .createTable(false)
                    .open());
    assertTrue(
        readOnly
            .getMessage()
            .contains(
                "role ro_role needs SELECT, INSERT and UPDATE on ro_table (GRANT SELECT, INSERT,"
                    + " UPDATE ON ro_table TO ro_role)"),
        readOnly.getMessage());
  }

  @Test
  void aRoleThatMayNotCreateTheTableIsToldWhatToGrantAndAnExistingTableIsNotCreatedAgain()
      throws Exception {
    pg.execute(
        "CREATE SCHEMA nocreate",
        "CREATE ROLE nc_role LOGIN",
        "GRANT USAGE ON SCHEMA nocreate TO nc_role");
    String asRole = pg.jdbcUrl().replaceAll("user=[^&]*", "user=nc_role");
    CdcStoreException refused =
        assertThrows(
            CdcStoreException.class,
            () ->
                JdbcCheckpointStore.builder(new UrlDataSource(asRole)).table("nocreate.cp").open());
    assertTrue(
        refused
                .getMessage()
                .contains(
                    "the table nocreate.cp does not exist and the role nc_role"
                        + " may not create it")
            && refused.getMessage().contains("[SQLSTATE 42501]): GRANT CREATE ON SCHEMA")
            && refused.getMessage().contains("#create=false"),
        refused.getMessage());
    // created by another role and granted: the default open (create) takes it as it is
    pg.execute(
        JdbcCheckpointStore.ddl("nocreate.cp"),
        "GRANT SELECT, INSERT, UPDATE, DELETE ON nocreate.cp TO nc_role");
    try (JdbcCheckpointStore store =
        JdbcCheckpointStore.builder(new UrlDataSource(asRole)).table("nocreate.cp").open()) {
      assertTrue(store.slots().isEmpty());
    }
  }

  @Test
  void theApplicationMayCreateTheTableFromTheDdl() throws Exception {
    pg.execute("CREATE SCHEMA app", JdbcCheckpointStore.ddl("app.cdc_checkpoint"));
    try (JdbcCheckpointStore store =
        JdbcCheckpointStore.builder(new UrlDataSource(pg.jdbcUrl()))
            .table("app.cdc_checkpoint")
            .createTable(false)
            .open()) {
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.parse("1/0")));
      assertEquals("1/0", pg.queryString("SELECT count(*) || '/0' FROM app.cdc_checkpoint"));
    }
    CdcStoreException missing =
        assertThrows(
            CdcStoreException.class,
            () ->
                JdbcCheckpointStore.builder(new UrlDataSource(pg.jdbcUrl()))
                    .table("app.missing")
                    .createTable(false)
                    .open());
    assertTrue(
        missing.getMessage().contains("the table app.missing does not exist")
            && missing.getMessage().contains("CREATE TABLE IF NOT EXISTS app.missing"),
        missing.getMessage());
  }

  @Test
  void tableNamesMustBePlainIdentifiers() {
    JdbcCheckpointStore.Builder builder =
        JdbcCheckpointStore.builder(new UrlDataSource(pg.jdbcUrl()));
    for (String bad : new String[] {"", "a;drop table x", "\"q\"", "a.b.c", "1a", "x".repeat(64)}) {
      CdcConfigurationException e =
          assertThrows(CdcConfigurationException.class, () -> builder.table(bad), bad);
      assertTrue(e.getMessage().contains("plain SQL identifier"), e.getMessage());
    }
    assertThrows(CdcConfigurationException.class, () -> JdbcCheckpointStore.ddl("a b"));
  }

  @Test
  void theUriTakesTheTableAndCreateFromItsFragmentAndHidesThePassword() throws Exception {
    String url = pg.jdbcUrl() + "&password=secret";
    try (var store = CheckpointStores.open(url + "#table=by_uri")) {
      store.store(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/20")));
      assertTrue(store.location().contains("table by_uri"), store.location());
      assertFalse(store.location().contains("secret"), store.location());
    }
    assertEquals("1", pg.queryString("SELECT count(*) FROM by_uri"));
    CdcConfigurationException unknown =
        assertThrows(
            CdcConfigurationException.class, () -> CheckpointStores.open(url + "#tabel=x"));
    assertTrue(unknown.getMessage().contains("\"tabel\""), unknown.getMessage());
    assertFalse(unknown.getMessage().contains("secret"), unknown.getMessage());
    assertThrows(
        CdcConfigurationException.class, () -> CheckpointStores.open(url + "#create=maybe"));
    assertThrows(
        CdcStoreException.class, () -> CheckpointStores.open(url + "#table=absent&create=false"));
    // the password from the environment, not the URI (the test server trusts every password:
    // this shows the variable is read, and an unset one refused by name)
    CdcConfigurationException unset =
        assertThrows(
            CdcConfigurationException.class,
            () ->
                CheckpointStores.open(pg.jdbcUrl() + "#table=by_uri&password-env=NO_SUCH_VAR_25"));
    assertTrue(
        unset
            .getMessage()
            .contains("password-env names the environment variable \"NO_SUCH_VAR_25\""),
        unset.getMessage());
    String set = System.getenv().keySet().stream().sorted().findFirst().orElseThrow();
    try (var store = CheckpointStores.open(pg.jdbcUrl() + "#table=by_uri&password-env=" + set)) {
      assertEquals(java.util.Set.of("s"), store.slots());
    }
  }

  @Test
  void aRefusedLoginOrAMissingDatabaseIsAConfigurationErrorNamingWhereThePasswordGoes()
      throws Exception {
    pg.execute("CREATE ROLE store_nologin NOLOGIN");
    for (String url :
        java.util.List.of(
            pg.jdbcUrl().replace("user=" + pg.user(), "user=store_nologin"),
            pg.jdbcUrl("no_such_db"))) {
      io.datum.cdc.CdcConfigurationException e =
          assertThrows(
              io.datum.cdc.CdcConfigurationException.class,
              () -> JdbcCheckpointStore.builder(new UrlDataSource(url)).open().close());
      assertTrue(
          e.getMessage().contains("[SQLSTATE ")
              && e.getMessage().contains("#password-env=VAR in the URI's fragment"),
          e.getMessage());
    }
  }
}
