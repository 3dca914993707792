package io.datum.cdc.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ColumnInfo;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.PgType;
import io.datum.cdc.event.PgType.Kind;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * End to end against PostgreSQL 17: the columns of streamed and snapshot rows describe their types
 * (kind, element, domain base and modifier, enum labels), declared dimensions and primary key, the
 * same for a read row as for a streamed one, in text and in binary mode, and for a column whose
 * type was created while the source runs.
 */
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ColumnTypesTest {

  private final EmbeddedPostgresServer pg;

  ColumnTypesTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void rowsDescribeTheirColumnsTypesInBothFormats() throws Exception {
    pg.execute(
        "CREATE TYPE hue AS ENUM ('red', 'green')",
        "CREATE DOMAIN price AS numeric(8,2)",
        "CREATE TABLE described (note varchar(20), region text, id int, hues hue[],"
            + " cost price, grid int[][], at timestamptz(3), PRIMARY KEY (region, id))",
        "INSERT INTO described VALUES ('n', 'eu', 1, '{red}', 1.5, '{{1}}', now())",
        "CREATE PUBLICATION described_pub FOR TABLE described");
    for (boolean binary : new boolean[] {false, true}) {
      String slot = "described_" + (binary ? "binary" : "text");
      LinkedBlockingQueue<ChangeEvent> events = new LinkedBlockingQueue<>();
      try (PgCdcSource source =
          PgCdcSource.builder()
              .jdbcUrl(pg.jdbcUrl())
              .user(pg.user())
              .slot(slot)
              .publication("described_pub")
              .checkpointStore(new MemoryCheckpointStore())
              .createSlot(true)
              .snapshot(SnapshotMode.INITIAL)
              .binary(binary)
              .build()) {
        source.start(
            (event, checkpoints) -> {
              events.add(event);
              checkpoints.acknowledge(event.offset());
            });
        ReadEvent read = assertInstanceOf(ReadEvent.class, events.poll(60, TimeUnit.SECONDS));
        pg.execute(
            "INSERT INTO described VALUES ('m', 'us', "
                + (binary ? 12 : 2)
                + ", '{green}', 2, '{{2}}', now())");
        ChangeEvent next = events.poll(60, TimeUnit.SECONDS);
        while (next instanceof ReadEvent) { // the rows of the earlier round
          next = events.poll(60, TimeUnit.SECONDS);
        }
        InsertEvent insert = assertInstanceOf(InsertEvent.class, next);
        List<ColumnInfo> columns = insert.after().columns();
        assertEquals(read.after().columns(), columns, "read and streamed rows, binary " + binary);

        ColumnInfo note = columns.get(0);
        assertEquals("pg_catalog.varchar", note.type().qualifiedName());
        assertEquals(20, note.length());
        assertEquals(0, note.primaryKeyPosition());
        assertEquals(1, columns.get(1).primaryKeyPosition()); // region
        assertEquals(2, columns.get(2).primaryKeyPosition()); // id
        PgType hues = columns.get(3).type();
        assertEquals(Kind.ARRAY, hues.kind());
        assertEquals("_hue", hues.name());
        assertEquals(Kind.ENUM, hues.element().kind());
        assertEquals(List.of("red", "green"), hues.element().enumLabels());
        ColumnInfo cost = columns.get(4);
        assertEquals(Kind.DOMAIN, cost.type().kind());
        assertEquals("public.price", cost.type().qualifiedName());
        assertSame(PgType.builtin(1700), cost.type().base());
        assertEquals(8, cost.precision());
        assertEquals(2, cost.scale());
        ColumnInfo grid = columns.get(5);
        assertEquals(2, grid.arrayDimensions());
        assertSame(PgType.builtin(1007), grid.type());
        assertEquals(3, columns.get(6).fractionalSecondsPrecision());

        // a column of a type created while the source runs
        pg.execute(
            "CREATE TYPE mood_" + slot + " AS ENUM ('up')",
            "ALTER TABLE described ADD COLUMN m_" + slot + " mood_" + slot,
            "INSERT INTO described (region, id) VALUES ('x', " + (binary ? 4 : 3) + ")");
        InsertEvent later = assertInstanceOf(InsertEvent.class, events.poll(60, TimeUnit.SECONDS));
        ColumnInfo added = later.after().columns().get(later.after().columns().size() - 1);
        assertEquals(Kind.ENUM, added.type().kind());
        assertEquals(List.of("up"), added.type().enumLabels());
        assertEquals(0, added.primaryKeyPosition());
      }
    }
  }
}
