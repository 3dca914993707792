package io.datum.cdc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.config.SnapshotMode;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The builder's checks; nothing here connects. */
class PgCdcSourceBuilderTest {

  private static PgCdcSource.Builder complete(String url) {
    return PgCdcSource.builder()
        .jdbcUrl(url)
        .slot("s")
        .publication("p")
        .checkpointStore(new MemoryCheckpointStore());
  }

  @Test
  void anOptionThatWouldBeIgnoredWithoutTheOneItAppliesWithIsRefused() {
    CdcConfigurationException tables =
        assertThrows(
            CdcConfigurationException.class,
            () -> complete("jdbc:postgresql://h/db").createPublication(false, "public.t").build());
    assertTrue(
        tables
            .getMessage()
            .startsWith(
                "publication-tables (the tables of createPublication(true, tables...), pgcdc"
                    + " --tables) applies only with create-publication true"),
        tables.getMessage());
    CdcConfigurationException chunks =
        assertThrows(
            CdcConfigurationException.class,
            () -> complete("jdbc:postgresql://h/db").snapshotChunkRows(200).build());
    assertTrue(
        chunks.getMessage().startsWith("snapshot-chunk-rows applies only with a snapshot mode"),
        chunks.getMessage());
    // with the option they apply with, or at their defaults, they are taken
    complete("jdbc:postgresql://h/db")
        .createPublication(true, "public.t")
        .snapshot(SnapshotMode.ON_REQUEST)
        .snapshotChunkRows(200)
        .snapshotParallelism(2)
        .build()
        .close();
    complete("jdbc:postgresql://h/db").snapshotParallelism(1).build().close();
  }

  @Test
  void namesEveryMissingSetting() {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class, () -> PgCdcSource.builder().slot("s").build());
    assertEquals("PgCdcSource needs jdbcUrl, publication, checkpointStore", e.getMessage());
  }

  @Test
  void aUserInTheUrlThatDiffersFromTheSetterIsRefused() {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class,
            () -> complete("jdbc:postgresql://h/db?ssl=false&user=postgres").user("cdc").build());
    assertEquals(
        "the JDBC URL's user parameter differs from the user given separately (the builder's"
            + " user(...), pgcdc --user); give it once",
        e.getMessage());
    e =
        assertThrows(
            CdcConfigurationException.class,
            () -> complete("jdbc:postgresql://h/db?password=a%26b").password("other").build());
    assertEquals(
        "the JDBC URL's password parameter differs from the password given separately (the"
            + " builder's password(...), pgcdc --password-env); give it once",
        e.getMessage());
    assertTrue(
        !e.getMessage().contains("a&b") && !e.getMessage().contains("other"), "no password in it");
  }

  @Test
  void thePrimarysUrlConnectsAsTheSameRole() {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class,
            () -> complete("jdbc:postgresql://h/db").primaryJdbcUrl("not a url"));
    assertTrue(e.getMessage().contains("for the primary"), e.getMessage());
    // a user in each URL, or one given separately and another in the primary's URL: refused
    e =
        assertThrows(
            CdcConfigurationException.class,
            () ->
                complete("jdbc:postgresql://standby/db?user=postgres")
                    .primaryJdbcUrl("jdbc:postgresql://primary/db?user=cdc")
                    .build());
    assertTrue(
        e.getMessage().startsWith("the primary's JDBC URL's user parameter differs")
            && e.getMessage().contains("both URLs connect as one role"),
        e.getMessage());
    e =
        assertThrows(
            CdcConfigurationException.class,
            () ->
                complete("jdbc:postgresql://standby/db")
                    .user("cdc")
                    .primaryJdbcUrl("jdbc:postgresql://primary/db?user=postgres")
                    .build());
    assertTrue(e.getMessage().startsWith("the primary's JDBC URL's user"), e.getMessage());
    // the same user in both, or in one only: accepted
    complete("jdbc:postgresql://standby/db?user=cdc")
        .primaryJdbcUrl("jdbc:postgresql://primary/db?user=cdc")
        .build()
        .close();
    complete("jdbc:postgresql://standby/db?user=cdc")
        .primaryJdbcUrl("jdbc:postgresql://primary/db")
        .build()
        .close();
  }

  @Test
  void theSameUserInTheUrlAndTheSetterOrOnlyOneOfThemIsAccepted() {
    complete("jdbc:postgresql://h/db?user=cdc").user("cdc").build().close();
    complete("jdbc:postgresql://h/db?password=a%26b").password("a&b").build().close();
    complete("jdbc:postgresql://h/db?user=cdc").build().close();
    complete("jdbc:postgresql://h/db").user("cdc").build().close();
    complete("jdbc:postgresql://h/db?username=x").user("cdc").build().close();
  }

  @Test
  void theUrlIsReadByPgjdbcsParser() {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class,
            () -> PgCdcSource.builder().jdbcUrl("jdbc:mysql://h/db?password=secret"));
    assertTrue(e.getMessage().contains("jdbc:mysql://h/db?password=***"), e.getMessage());
    assertTrue(!e.getMessage().contains("secret"), "no password in it");
    assertThrows(
        CdcConfigurationException.class,
        () -> PgCdcSource.builder().jdbcUrl("jdbc:postgresql://h:notaport/db"));
    // host lists as pgjdbc reads them, and a user spelled with percent-encoding
    complete("jdbc:postgresql://h1:5432,h2:5433/db?targetServerType=primary").build().close();
    e =
        assertThrows(
            CdcConfigurationException.class,
            () -> complete("jdbc:postgresql://h1,h2/db?user=c%64c").user("cdx").build());
    assertTrue(e.getMessage().contains("user parameter differs"), e.getMessage());
    complete("jdbc:postgresql://h1,h2/db?user=c%64c").user("cdc").build().close();
  }

  @Test
  void reconnectArgumentsAreChecked() {
    PgCdcSource.Builder builder = complete("jdbc:postgresql://h/db");
    assertThrows(
        IllegalArgumentException.class,
        () -> builder.reconnect(-1, Duration.ofMillis(1), Duration.ofMillis(1)));
    assertThrows(
        IllegalArgumentException.class,
        () -> builder.reconnect(1, Duration.ZERO, Duration.ofMillis(1)));
    assertThrows(
        IllegalArgumentException.class,
        () -> builder.reconnect(1, Duration.ofMillis(2), Duration.ofMillis(1)));
  }
}
