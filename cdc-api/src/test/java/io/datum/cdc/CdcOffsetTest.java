package io.datum.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CdcOffsetTest {

  private static final PgLsn END = PgLsn.parse("0/16B37A0");
  private static final PgLsn COMMIT = PgLsn.parse("0/16B3748");

  @Test
  void validConstruction() {
    CdcOffset offset = new CdcOffset("s", END, COMMIT, 741L, 0, 3);
    assertEquals("s", offset.slot());
    assertEquals(END, offset.txEndLsn());
    assertEquals(COMMIT, offset.commitLsn());
    assertEquals(741L, offset.xid());
    assertEquals(0, offset.eventIndex());
    assertEquals(3, offset.eventCount());
    assertEquals("s@0/16B37A0#0/3 (xid 741)", offset.toString());
  }

  @Test
  void boundaryValuesAreAccepted() {
    CdcOffset maxXid = new CdcOffset("slot_1", END, COMMIT, 0xFFFF_FFFFL, 2, 3);
    assertEquals(4294967295L, maxXid.xid());
    CdcOffset zeroXid = new CdcOffset("slot_1", END, COMMIT, 0L, 0, 1);
    assertEquals(0L, zeroXid.xid());
    // commitLsn equal to txEndLsn is "not after"
    CdcOffset sameLsn = new CdcOffset("slot_1", END, END, 1L, 0, 1);
    assertEquals(END, sameLsn.commitLsn());
    // unsigned: a commit LSN with the top bit set before a larger end LSN
    CdcOffset high =
        new CdcOffset(
            "slot_1", PgLsn.parse("FFFFFFFF/FFFFFFFF"), PgLsn.parse("80000000/0"), 1L, 0, 1);
    assertEquals(PgLsn.parse("80000000/0"), high.commitLsn());
    CdcOffset maxCount =
        new CdcOffset("slot_1", END, COMMIT, 1L, Integer.MAX_VALUE - 1, Integer.MAX_VALUE);
    assertEquals(Integer.MAX_VALUE - 1, maxCount.eventIndex());
  }

  @Test
  void equalsIsByValue() {
    assertEquals(
        new CdcOffset("s", END, COMMIT, 7L, 1, 2),
        new CdcOffset("s", PgLsn.parse("0/16B37A0"), PgLsn.parse("0/16B3748"), 7L, 1, 2));
    assertNotEquals(
        new CdcOffset("s", END, COMMIT, 7L, 1, 2), new CdcOffset("s", END, COMMIT, 7L, 0, 2));
  }

  @Test
  void eventCountZeroIsRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> new CdcOffset("s", END, COMMIT, 1L, 0, 0));
    assertEquals("eventCount must be at least 1, was 0", e.getMessage());
  }

  @Test
  void negativeEventCountIsRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> new CdcOffset("s", END, COMMIT, 1L, 0, -5));
    assertEquals("eventCount must be at least 1, was -5", e.getMessage());
  }

  @Test
  void negativeIndexIsRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> new CdcOffset("s", END, COMMIT, 1L, -1, 3));
    assertEquals("eventIndex -1 outside [0, 3)", e.getMessage());
  }

  @Test
  void indexEqualToCountIsRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> new CdcOffset("s", END, COMMIT, 1L, 3, 3));
    assertEquals("eventIndex 3 outside [0, 3)", e.getMessage());
  }

  @Test
  void negativeXidIsRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> new CdcOffset("s", END, COMMIT, -1L, 0, 1));
    assertEquals("xid -1 outside the unsigned 32-bit range", e.getMessage());
  }

  @Test
  void xidTwoToThe32IsRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> new CdcOffset("s", END, COMMIT, 1L << 32, 0, 1));
    assertEquals("xid 4294967296 outside the unsigned 32-bit range", e.getMessage());
  }

  @Test
  void commitLsnAfterTxEndLsnIsRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> new CdcOffset("s", COMMIT, END, 1L, 0, 1));
    assertEquals("commitLsn 0/16B37A0 is after txEndLsn 0/16B3748", e.getMessage());
  }

  @Test
  void commitLsnAfterTxEndLsnIsRejectedUnsigned() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new CdcOffset("s", PgLsn.parse("0/1"), PgLsn.parse("FFFFFFFF/FFFFFFFF"), 1L, 0, 1));
    assertEquals("commitLsn FFFFFFFF/FFFFFFFF is after txEndLsn 0/1", e.getMessage());
  }

  @Test
  void badSlotNameIsRejected() {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class,
            () -> new CdcOffset("Bad-Slot", END, COMMIT, 1L, 0, 1));
    assertEquals(
        "invalid replication slot name \"Bad-Slot\": PostgreSQL slot names are 1 to 63 characters"
            + " of a-z, 0-9 and _",
        e.getMessage());
  }

  @Test
  void nullSlotIsRejected() {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class, () -> new CdcOffset(null, END, COMMIT, 1L, 0, 1));
    assertEquals(
        "invalid replication slot name null: PostgreSQL slot names are 1 to 63 characters"
            + " of a-z, 0-9 and _",
        e.getMessage());
  }

  @Test
  void nullLsnsAreRejected() {
    NullPointerException end =
        assertThrows(NullPointerException.class, () -> new CdcOffset("s", null, COMMIT, 1L, 0, 1));
    assertEquals("txEndLsn", end.getMessage());
    NullPointerException commit =
        assertThrows(NullPointerException.class, () -> new CdcOffset("s", END, null, 1L, 0, 1));
    assertEquals("commitLsn", commit.getMessage());
  }

  @Test
  void isLastInTransaction() {
    assertTrue(new CdcOffset("s", END, COMMIT, 1L, 0, 1).isLastInTransaction());
    assertFalse(new CdcOffset("s", END, COMMIT, 1L, 0, 3).isLastInTransaction());
    assertFalse(new CdcOffset("s", END, COMMIT, 1L, 1, 3).isLastInTransaction());
    assertTrue(new CdcOffset("s", END, COMMIT, 1L, 2, 3).isLastInTransaction());
  }
}
