package io.datum.cdc.core;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import org.junit.jupiter.api.Test;

/**
 * A publication the source is told to create ({@code createPublication(true, tables...)}) for a
 * table that does not exist: a configuration fault, which retrying cannot fix, naming the tables
 * and the remedy; nothing is created.
 */
@EmbeddedPostgresTest
class PublicationCreationTest {

  @Test
  void aMissingTableToPublishIsAConfigurationFaultNamingIt(EmbeddedPostgresServer pg)
      throws Exception {
    pg.execute("CREATE TABLE pubc_present (id int PRIMARY KEY)");
    for (String missing : new String[] {"public.pubc_missing", "nosuchschema.pubc_present"}) {
      PgCdcSource source =
          PgCdcSource.builder()
              .jdbcUrl(pg.jdbcUrl())
              .user(pg.user())
              .slot("pubc_slot")
              .publication("pubc_pub")
              .createSlot(true)
              .createPublication(true, "public.pubc_present", missing)
              .checkpointStore(new MemoryCheckpointStore())
              .reconnect(3, java.time.Duration.ofMillis(50), java.time.Duration.ofMillis(50))
              .build();
      CdcConfigurationException e =
          assertThrows(
              CdcConfigurationException.class, () -> source.start(new EventCollector(true)));
      assertTrue(
          e.getMessage().contains("cannot create publication \"pubc_pub\"")
              && e.getMessage().contains(missing)
              && e.getMessage().contains("--tables")
              && e.getMessage().contains("does not exist"),
          e.getMessage());
      assertFalse(
          pg.queryString("SELECT count(*) FROM pg_publication WHERE pubname = 'pubc_pub'")
              .equals("1"),
          "no publication was created");
      assertFalse(
          pg.queryString("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'pubc_slot'")
              .equals("1"),
          "no slot was created");
    }
  }
}
