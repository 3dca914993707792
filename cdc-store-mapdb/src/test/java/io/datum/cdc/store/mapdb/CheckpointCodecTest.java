package io.datum.cdc.store.mapdb;

import static io.datum.cdc.store.mapdb.Checkpoints.checkpoint;
import static io.datum.cdc.store.mapdb.Checkpoints.tx;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** The binary checkpoint encoding: round trips, compactness, strict decoding. */
class CheckpointCodecTest {

  private static final Path FILE = Path.of("/var/lib/app/cdc.mapdb");

  private static CdcCheckpoint roundTrip(CdcCheckpoint c) {
    CdcCheckpoint back = CheckpointCodec.decode(CheckpointCodec.encode(c), c.slot(), FILE);
    assertEquals(c, back);
    for (int i = 0; i < c.acknowledgedBeyond().size(); i++) {
      assertEquals(
          c.acknowledgedBeyond().get(i).acknowledged(),
          back.acknowledgedBeyond().get(i).acknowledged());
      assertEquals(
          c.acknowledgedBeyond().get(i).eventCount(),
          back.acknowledgedBeyond().get(i).eventCount());
    }
    return back;
  }

  @Test
  void roundTripsWatermarksAndPartialTransactions() {
    roundTrip(CdcCheckpoint.atWatermark("s", PgLsn.ZERO));
    roundTrip(checkpoint("s", "0/16B3748"));
    roundTrip(checkpoint("max", "FFFFFFFF/FFFFFFFF"));
    roundTrip(checkpoint("high", "FFFFFFFF/FFFFFFFE", tx("FFFFFFFF/FFFFFFFF", 2, 1)));
    roundTrip(checkpoint("upper", "80000000/0", tx("80000000/1", 7, 6)));
    roundTrip(
        checkpoint(
            "p",
            "0/10",
            tx("0/20", 3, 1),
            tx("0/30", 5, 0, 2, 3, 4),
            tx("0/40", 1, 0),
            tx("0/50", 4),
            tx("1/0", 64, 0, 63)));
    roundTrip(
        checkpoint(
            "huge",
            "A/0",
            tx("A/4", Integer.MAX_VALUE, 0, 1, 1000, 1_000_000, Integer.MAX_VALUE - 1)));
    roundTrip(checkpoint("z".repeat(63), "1/1"));
  }

  @Test
  void roundTripsRandomBitSets() {
    Random random = new Random(42);
    for (int round = 0; round < 500; round++) {
      int count = 1 + random.nextInt(round < 250 ? 70 : 5000);
      BitSet bits = new BitSet();
      double density = random.nextDouble();
      for (int i = 0; i < count; i++) {
        if (random.nextDouble() < density) {
          bits.set(i);
        }
      }
      roundTrip(
          new CdcCheckpoint(
              "r",
              PgLsn.of(round),
              List.of(new PartialTransaction(PgLsn.of(round + 1L), count, bits))));
    }
  }

  @Test
  void isCompact() {
    assertEquals(
        1 + 1 + 14 + 8 + 1 + 4,
        CheckpointCodec.encode(checkpoint("orders_replica", "0/16B3748")).length);
    // every other event of 20 000 acknowledged: 10 000 ranges of 2 one-byte varints each
    BitSet alternating = new BitSet();
    for (int i = 0; i < 20_000; i += 2) {
      alternating.set(i);
    }
    byte[] encoded =
        CheckpointCodec.encode(
            new CdcCheckpoint(
                "s",
                PgLsn.of(1),
                List.of(new PartialTransaction(PgLsn.of(2), 1_000_000, alternating))));
    assertTrue(encoded.length < 20_100, "encoded length " + encoded.length);
  }

  @Test
  void aFlippedBitFailsTheChecksumNamingFileAndSlot() {
    byte[] value = CheckpointCodec.encode(checkpoint("orders", "0/16B3748", tx("0/16B37A0", 3, 1)));
    for (int i = 0; i < value.length; i++) {
      byte[] damaged = value.clone();
      damaged[i] ^= 0x10;
      CdcStoreException e =
          assertThrows(
              CdcStoreException.class, () -> CheckpointCodec.decode(damaged, "orders", FILE));
      assertTrue(e.getMessage().contains(FILE.toString()), e.getMessage());
      assertTrue(e.getMessage().contains("slot \"orders\""), e.getMessage());
    }
  }

  @Test
  void truncatedOrEmptyValuesAreCorrupt() {
    byte[] value = CheckpointCodec.encode(checkpoint("s", "0/10", tx("0/20", 3, 1)));
    for (int length = 0; length < value.length; length++) {
      byte[] cut = Arrays.copyOf(value, length);
      assertThrows(
          CdcStoreException.class,
          () -> CheckpointCodec.decode(cut, "s", FILE),
          "length " + length);
    }
    assertThrows(CdcStoreException.class, () -> CheckpointCodec.decode(null, "s", FILE));
  }

  @Test
  void aValueOfAnotherSlotIsCorrupt() {
    byte[] value = CheckpointCodec.encode(checkpoint("a", "0/10"));
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> CheckpointCodec.decode(value, "b", FILE));
    assertTrue(e.getMessage().contains("belongs to slot \"a\""), e.getMessage());
  }

  @Test
  void structurallyWrongValuesWithAValidChecksumAreCorrupt() {
    byte[] good = CheckpointCodec.encode(checkpoint("s", "0/10", tx("0/20", 8, 1, 2, 5)));
    // layout: format(0) len(1) 's'(2) watermark(3..10) txCount(11) txEnd(12..19) count(20)
    // ranges(21) ...
    assertCorrupt(with(good, 0, (byte) 2), "unsupported format 2");
    assertCorrupt(
        with(good, 20, (byte) 4), "outside [0, 4)"); // event count 8 -> 4, range [5, 6) outside
    assertCorrupt(with(good, 24, (byte) 0), "touches or overlaps"); // second range's gap 1 -> 0
    assertCorrupt(withCrc(Arrays.copyOf(body(good), body(good).length + 1)), "trailing");
    assertCorrupt(with(good, 11, (byte) 0x80), "malformed");
    // a transaction at or before the watermark is refused by CdcCheckpoint itself
    assertCorrupt(with(good, 19, (byte) 0x10), "is not after");
  }

  private static void assertCorrupt(byte[] value, String expected) {
    CdcStoreException e =
        assertThrows(CdcStoreException.class, () -> CheckpointCodec.decode(value, "s", FILE));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }

  private static byte[] body(byte[] value) {
    return Arrays.copyOf(value, value.length - 4);
  }

  /** The value with byte {@code at} replaced, its checksum recomputed. */
  private static byte[] with(byte[] value, int at, byte b) {
    byte[] body = body(value);
    body[at] = b;
    return withCrc(body);
  }

  private static byte[] withCrc(byte[] body) {
    CRC32C crc = new CRC32C();
    crc.update(body);
    return ByteBuffer.allocate(body.length + 4).put(body).putInt((int) crc.getValue()).array();
  }

  @Test
  void theSlotManifestRoundTripsAndDetectsDamage() {
    java.util.TreeSet<String> slots =
        new java.util.TreeSet<>(List.of("b", "a", "z".repeat(63), "_0"));
    assertEquals(slots, CheckpointCodec.decodeSlots(CheckpointCodec.encodeSlots(slots), FILE));
    assertEquals(
        java.util.Set.of(),
        CheckpointCodec.decodeSlots(CheckpointCodec.encodeSlots(new java.util.TreeSet<>()), FILE));
    byte[] value = CheckpointCodec.encodeSlots(slots);
    for (int i = 0; i < value.length; i++) {
      byte[] damaged = value.clone();
      damaged[i] ^= 0x04;
      CdcStoreException e =
          assertThrows(CdcStoreException.class, () -> CheckpointCodec.decodeSlots(damaged, FILE));
      assertTrue(e.getMessage().contains(FILE + ": its list of slots"), e.getMessage());
    }
    assertThrows(CdcStoreException.class, () -> CheckpointCodec.decodeSlots(null, FILE));
    assertThrows(CdcStoreException.class, () -> CheckpointCodec.decodeSlots(new byte[3], FILE));
    // a repeated or invalid name, with a valid checksum
    byte[] repeated = CheckpointCodec.encodeSlots(new java.util.TreeSet<>(List.of("a", "b")));
    repeated[4] = 'a';
    assertThrows(
        CdcStoreException.class, () -> CheckpointCodec.decodeSlots(withCrc(body(repeated)), FILE));
    byte[] invalid = CheckpointCodec.encodeSlots(new java.util.TreeSet<>(List.of("a")));
    invalid[3] = 'A';
    assertThrows(
        CdcStoreException.class, () -> CheckpointCodec.decodeSlots(withCrc(body(invalid)), FILE));
  }

  @Test
  void encodingIsDeterministic() {
    CdcCheckpoint c = checkpoint("s", "1/2", tx("1/3", 9, 0, 1, 2, 7));
    assertArrayEquals(CheckpointCodec.encode(c), CheckpointCodec.encode(roundTrip(c)));
  }
}
