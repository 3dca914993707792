package io.datum.cdc.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.AcknowledgedRun;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.TableId;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class CheckpointCodecTest {

  private static final String WHERE = "test location /x";

  private static final CdcCheckpoint PARTIAL =
      new CdcCheckpoint(
          "s",
          PgLsn.parse("0/16B3748"),
          List.of(
              PartialTransaction.ofRanges(PgLsn.parse("0/16B37A0"), 3, new int[] {1, 2}),
              PartialTransaction.ofRanges(
                  PgLsn.parse("FFFFFFFF/FFFFFFFF"), 9, new int[] {0, 2, 4, 9})));

  /** Partial transactions around two runs of fully acknowledged ones, with a cluster identity. */
  private static final CdcCheckpoint RUNS =
      new CdcCheckpoint(
          "s",
          PgLsn.parse("0/100"),
          List.of(
              PartialTransaction.ofRanges(PgLsn.parse("0/200"), 3, new int[] {1, 2}),
              PartialTransaction.ofRanges(PgLsn.parse("0/900"), 2, new int[] {0, 1})),
          List.of(
              new AcknowledgedRun(PgLsn.parse("0/300"), PgLsn.parse("0/800")),
              new AcknowledgedRun(PgLsn.parse("1/0"), PgLsn.parse("1/0"))),
          new ClusterIdentity(-2L, 3, "démo"),
          "orders_pub");

  @Test
  void writesTheDocumentedLayout() {
    byte[] bytes = CheckpointCodec.encode(CdcCheckpoint.atWatermark("ab", PgLsn.parse("1/2")));
    assertEquals(
        "44434b50"
            + "0003"
            + "02"
            + "6162"
            + "0000000100000002"
            + "00000000"
            + "00000000"
            + "00"
            + "00"
            + "00",
        HexFormat.of().formatHex(bytes, 0, bytes.length - 4));
    assertEquals(29 + 3, bytes.length);
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bytes.length - 4);
    assertEquals((int) crc.getValue(), ByteBuffer.wrap(bytes, bytes.length - 4, 4).getInt());

    byte[] identified =
        CheckpointCodec.encode(
            CdcCheckpoint.atWatermark("ab", PgLsn.parse("1/2"))
                .withCluster(new ClusterIdentity(0x0102030405060708L, 9, "db"))
                .withPublication("p"));
    assertEquals(
        "00000000" + "01" + "0102030405060708" + "00000009" + "02" + "6462" + "01" + "70" + "00",
        HexFormat.of().formatHex(identified, 21, identified.length - 4));
  }

  @Test
  void readsFormatOneAsACheckpointWithoutRunsOrCluster() {
    // written by datum-cdc before format 2: atWatermark("ab", 1/2), and PARTIAL
    byte[] v1 = HexFormat.of().parseHex("44434b50000102616200000001000000020000000082d9ab17");
    assertEquals(
        CdcCheckpoint.atWatermark("ab", PgLsn.parse("1/2")),
        CheckpointCodec.decode(withCrc(v1), "ab", WHERE));
    byte[] partialV1 = CheckpointCodec.encode(PARTIAL);
    // no run count, no cluster flag, no publication length
    partialV1 = Arrays.copyOf(partialV1, partialV1.length - 7);
    partialV1[5] = 1;
    assertEquals(PARTIAL, CheckpointCodec.decode(withCrc(partialV1), "s", WHERE));
    assertCorrupt(withCrc(patch(CheckpointCodec.encode(RUNS), 5, (byte) 1)), "after the last");
  }

  @Test
  void runsAndTheClusterIdentityRoundTrip() {
    byte[] bytes = CheckpointCodec.encode(RUNS);
    assertEquals(RUNS, CheckpointCodec.decode(bytes, "s", WHERE));
    assertEquals(29 + 1 + 2 * 16 + 2 * 8 + 2 * 16 + 13 + 5 + 10 + 1, bytes.length);
  }

  @Test
  void decodesWhatItEncodes() {
    for (CdcCheckpoint c :
        List.of(PARTIAL, RUNS, CdcCheckpoint.atWatermark("z".repeat(63), PgLsn.ZERO))) {
      assertEquals(c, CheckpointCodec.decode(CheckpointCodec.encode(c), c.slot(), WHERE));
    }
    assertEquals(29 + 1 + 2 * 16 + 3 * 8 + 1, CheckpointCodec.encode(PARTIAL).length);
  }

  /** Snapshot progress with composite keys, open bounds and awkward text. */
  private static final CdcCheckpoint SNAPSHOT =
      RUNS.withSnapshot(
          new SnapshotProgress(
              false,
              PgLsn.parse("0/50"),
              List.of(
                  SnapshotProgress.TableSnapshot.whole("initial", new TableId("public", "t")),
                  new SnapshotProgress.TableSnapshot(
                      "request-0/80",
                      new TableId("s", "ü\ttab"),
                      List.of(
                          new SnapshotProgress.KeyRange(
                              List.of("1", "a"), List.of("9", ""), List.of(List.of("3", "x"))),
                          new SnapshotProgress.KeyRange(List.of("9", ""), null, List.of()))))));

  @Test
  void snapshotProgressRoundTripsAndFormatTwoReadsWithout() {
    assertEquals(SNAPSHOT, CheckpointCodec.decode(CheckpointCodec.encode(SNAPSHOT), "s", WHERE));
    CdcCheckpoint done = RUNS.withSnapshot(new SnapshotProgress(true, null, List.of()));
    assertEquals(done, CheckpointCodec.decode(CheckpointCodec.encode(done), "s", WHERE));
    // format 2: everything up to the publication, no snapshot flags
    byte[] v2 = CheckpointCodec.encode(RUNS);
    v2 = Arrays.copyOf(v2, v2.length - 5);
    v2[5] = 2;
    assertEquals(
        RUNS, CheckpointCodec.decode(withCrc(Arrays.copyOf(v2, v2.length + 4)), "s", WHERE));
  }

  @Test
  void damagedSnapshotProgressIsAnErrorNamingTheLocation() {
    byte[] bytes = CheckpointCodec.encode(SNAPSHOT);
    for (int cut = 1; cut < 60; cut++) {
      byte[] truncated = Arrays.copyOf(bytes, bytes.length - 4 - cut);
      assertCorrupt(withCrc(Arrays.copyOf(truncated, truncated.length + 4)), "");
    }
  }

  @Test
  void everyTruncationAndEveryFlippedBitIsAnErrorNamingTheLocationAndSlot() {
    byte[] good = CheckpointCodec.encode(RUNS);
    for (int length = 0; length < good.length; length++) {
      assertCorrupt(Arrays.copyOf(good, length), "");
    }
    for (int bit = 0; bit < good.length * 8; bit++) {
      byte[] bad = good.clone();
      bad[bit / 8] ^= (byte) (1 << (bit % 8));
      assertCorrupt(bad, "");
    }
    byte[] longer = Arrays.copyOf(good, good.length + 1);
    assertCorrupt(longer, "");
  }

  @Test
  void anotherVersionAnotherSlotAndJsonAreNamedAsSuch() {
    assertCorrupt(withCrc(patch(CheckpointCodec.encode(PARTIAL), 5, (byte) 4)), "format version 4");
    assertCorrupt(withCrc(patch(CheckpointCodec.encode(PARTIAL), 5, (byte) 0)), "format version 0");
    assertCorrupt(CheckpointCodec.encode(CdcCheckpoint.atWatermark("t", PgLsn.ZERO)), "slot \"t\"");
    assertCorrupt(
        "{\"format\":1,\"slot\":\"s\",\"watermark\":\"0/1\"}".getBytes(StandardCharsets.UTF_8),
        "looks like JSON");
  }

  @Test
  void fieldsACheckpointRefusesAreErrorsEvenWithAGoodChecksum() {
    // the range [1, 2) of the first transaction widened to [1, 4), beyond its 3 events
    byte[] bytes = CheckpointCodec.encode(PARTIAL);
    int firstRangeEnd = 4 + 2 + 1 + 1 + 8 + 4 + 8 + 4 + 4 + 4;
    ByteBuffer.wrap(bytes).putInt(firstRangeEnd, 4);
    assertCorrupt(withCrc(bytes), "outside [0, 3)");
    // a run moved over the partial transaction at 0/200
    byte[] overlapping = CheckpointCodec.encode(RUNS);
    int firstRun = 4 + 2 + 1 + 1 + 8 + 4 + (8 + 4 + 4 + 8) * 2 + 4;
    ByteBuffer.wrap(overlapping).putLong(firstRun, PgLsn.parse("0/180").asLong());
    assertCorrupt(withCrc(overlapping), "lies inside run");
    byte[] flag = CheckpointCodec.encode(RUNS);
    flag[firstRun + 2 * 16] = 2;
    assertCorrupt(withCrc(flag), "cluster flag 2");
  }

  private static void assertCorrupt(byte[] value, String reason) {
    CdcStoreException e =
        assertThrows(
            CdcStoreException.class,
            () -> CheckpointCodec.decode(value, "s", WHERE),
            () -> "decoding " + HexFormat.of().formatHex(value));
    assertTrue(
        e.getMessage().startsWith("corrupt checkpoint of slot \"s\" in " + WHERE + ": ")
            && e.getMessage().contains(reason),
        e.getMessage());
  }

  private static byte[] patch(byte[] bytes, int at, byte value) {
    bytes[at] = value;
    return bytes;
  }

  private static byte[] withCrc(byte[] bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, bytes.length - 4);
    ByteBuffer.wrap(bytes).putInt(bytes.length - 4, (int) crc.getValue());
    return bytes;
  }
}
