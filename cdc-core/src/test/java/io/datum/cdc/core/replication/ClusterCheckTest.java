package io.datum.cdc.core.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.datum.cdc.PgLsn;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

class ClusterCheckTest {

  /** A timeline 3 history file as the server writes it (timeline.c, writeTimeLineHistory). */
  private static final String HISTORY =
      "1\t0/3000158\tno recovery target specified\n"
          + "\n"
          + "2\t1/A0000000\tat restore point \"before upgrade\"\n";

  @Test
  void findsWhereEachAncestorTimelineEnded() throws SQLException {
    assertEquals(PgLsn.parse("0/3000158"), ClusterCheck.switchpoint(HISTORY, 1));
    assertEquals(PgLsn.parse("1/A0000000"), ClusterCheck.switchpoint(HISTORY, 2));
    assertNull(ClusterCheck.switchpoint(HISTORY, 4));
    assertNull(ClusterCheck.switchpoint("", 1));
  }

  @Test
  void aMalformedLineIsAnErrorQuotingIt() {
    SQLException e =
        assertThrows(SQLException.class, () -> ClusterCheck.switchpoint("1 nonsense\n", 1));
    assertEquals("malformed timeline history line: 1 nonsense", e.getMessage());
  }
}
