package io.datum.cdc.spi;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.AcknowledgedRun;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SlotNames;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.SnapshotProgress.KeyRange;
import io.datum.cdc.SnapshotProgress.TableSnapshot;
import io.datum.cdc.TableId;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * The one binary form of a {@link CdcCheckpoint}, used by every checkpoint store shipped with
 * datum-cdc and open to plugins: a store keeps these bytes per slot and needs no format of its own.
 *
 * <p>Format version 3; integers big-endian, LSNs unsigned 64-bit:
 *
 * <pre>
 * u32   magic               0x44434B50, "DCKP"
 * u16   format version      3 (1 is read too: it ends after the transactions; 2 after the
 *                           publication)
 * u8    slot length         1..63
 * bytes slot                ASCII [a-z0-9_], the slot the value is stored for
 * u64   watermark
 * u32   transaction count n
 * n times:
 *   u64 txEndLsn            strictly ascending, after the watermark
 *   u32 eventCount          at least 1
 *   u32 range count r
 *   r times: u32 from, u32 to   acknowledged event indexes [from, to), half-open; ascending,
 *                                disjoint, not adjacent, within [0, eventCount)
 * u32   run count m         (version 2)
 * m times:
 *   u64 first txEndLsn, u64 last txEndLsn   a run of fully acknowledged transactions; ascending,
 *                                disjoint, after the watermark, no transaction above inside one
 * u8    cluster flag        0: unknown; 1: the next three fields follow
 *   u64 system identifier   IDENTIFY_SYSTEM's systemid
 *   u32 timeline            at least 1
 *   u8  database length     1..63, then the database name's UTF-8 bytes
 * u8    publication length  0: unknown; 1..63, then the publication name's UTF-8 bytes
 * u8    snapshot flags      (version 3) bit 0: progress follows; bit 1: initial snapshot completed
 *   u64 hold LSN            0: none; else the initial snapshot's consistent point
 *   u32 table count t
 *   t times:
 *     str16 snapshot id, str16 schema, str16 table    (u16 length, then UTF-8 bytes)
 *     u32 range count k
 *     k times:
 *       key after, key through    (u16 column count, 0: no bound; then per column a str32)
 *       u32 acknowledged count a, then a keys (u16 column count, at least 1, then str32s)
 * u32   CRC32C              of every byte before it
 * </pre>
 *
 * <p>A checkpoint at a watermark only takes {@code 29 + slot length} bytes, plus {@code 14 +
 * database length} with a cluster identity and the publication name's length; each partially
 * acknowledged transaction adds 16 bytes, each run of acknowledged events 8, each run of fully
 * acknowledged transactions 16. Decoding is strict: a wrong magic, an unknown format version, a
 * checksum mismatch, a truncated or over-long value, a value of another slot or fields a {@link
 * CdcCheckpoint} refuses are reported as a {@link CdcStoreException} naming the location and the
 * slot, never returned. Format 1 (datum-cdc before cluster identities and runs) decodes to a
 * checkpoint without either, format 2 (before snapshots) to one without snapshot progress; the next
 * store writes format 3, which earlier versions refuse with a message naming the version.
 *
 * <p>Stateless and thread-safe.
 */
public final class CheckpointCodec {

  /** The first four bytes of every encoded checkpoint, ASCII {@code DCKP}. */
  public static final int MAGIC = 0x44434B50;

  /** The format version this class writes; it reads this one and version 1. */
  public static final int FORMAT_VERSION = 3;

  /** The first format version, still read: no runs, no cluster identity. */
  public static final int FORMAT_VERSION_1 = 1;

  /** The second format version, still read: no snapshot progress. */
  public static final int FORMAT_VERSION_2 = 2;

  /** magic, version, slot length, watermark, transaction count, checksum (plus the slot). */
  private static final int FIXED_BYTES = 4 + 2 + 1 + 8 + 4 + 4;

  /** run count, cluster flag, publication length. */
  private static final int V2_FIXED_BYTES = 4 + 1 + 1;

  private static final int RUN_BYTES = 8 + 8;
  private static final int CLUSTER_BYTES = 8 + 4 + 1;

  private static final int TX_BYTES = 8 + 4 + 4;
  private static final int RANGE_BYTES = 4 + 4;

  private CheckpointCodec() {}

  /**
   * Encodes a checkpoint.
   *
   * @param checkpoint the checkpoint, not null
   * @return a new array holding the encoded checkpoint
   * @throws NullPointerException if {@code checkpoint} is null
   * @throws IllegalArgumentException if the encoding would exceed 2 GiB (hundreds of millions of
   *     acknowledged ranges)
   */
  public static byte[] encode(CdcCheckpoint checkpoint) {
    Objects.requireNonNull(checkpoint, "checkpoint");
    byte[] slot = checkpoint.slot().getBytes(StandardCharsets.US_ASCII);
    List<PartialTransaction> txs = checkpoint.acknowledgedBeyond();
    List<AcknowledgedRun> runs = checkpoint.acknowledgedRuns();
    ClusterIdentity cluster = checkpoint.cluster();
    byte[] database = cluster == null ? null : cluster.database().getBytes(StandardCharsets.UTF_8);
    byte[] publication =
        checkpoint.publication() == null
            ? new byte[0]
            : checkpoint.publication().getBytes(StandardCharsets.UTF_8);
    List<int[]> ranges = new ArrayList<>(txs.size());
    byte[] snapshot = encodeSnapshot(checkpoint.snapshot());
    long size =
        FIXED_BYTES
            + slot.length
            + V2_FIXED_BYTES
            + (snapshot == null ? 1 : snapshot.length)
            + (long) RUN_BYTES * runs.size()
            + (cluster == null ? 0 : CLUSTER_BYTES + database.length)
            + publication.length;
    for (PartialTransaction tx : txs) {
      int[] r = tx.acknowledgedRanges();
      ranges.add(r);
      size += TX_BYTES + (long) RANGE_BYTES / 2 * r.length;
    }
    if (size > Integer.MAX_VALUE - 16) {
      throw new IllegalArgumentException(
          "the checkpoint of slot " + checkpoint.slot() + " would take " + size + " bytes");
    }
    ByteBuffer out = ByteBuffer.allocate((int) size);
    out.putInt(MAGIC).putShort((short) FORMAT_VERSION).put((byte) slot.length).put(slot);
    out.putLong(checkpoint.watermark().asLong()).putInt(txs.size());
    for (int i = 0; i < txs.size(); i++) {
      PartialTransaction tx = txs.get(i);
      int[] r = ranges.get(i);
      out.putLong(tx.txEndLsn().asLong()).putInt(tx.eventCount()).putInt(r.length / 2);
      for (int bound : r) {
        out.putInt(bound);
      }
    }
    out.putInt(runs.size());
    for (AcknowledgedRun run : runs) {
      out.putLong(run.firstTxEndLsn().asLong()).putLong(run.lastTxEndLsn().asLong());
    }
    if (cluster == null) {
      out.put((byte) 0);
    } else {
      out.put((byte) 1).putLong(cluster.systemIdentifier()).putInt(cluster.timeline());
      out.put((byte) database.length).put(database);
    }
    out.put((byte) publication.length).put(publication);
    if (snapshot == null) {
      out.put((byte) 0);
    } else {
      out.put(snapshot);
    }
    out.putInt(crc(out.array(), out.position()));
    return out.array();
  }

  /** The snapshot section from its flags on, or null for {@link SnapshotProgress#NONE}. */
  private static byte[] encodeSnapshot(SnapshotProgress progress) {
    if (progress.equals(SnapshotProgress.NONE)) {
      return null;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(1 | (progress.initialCompleted() ? 2 : 0));
      out.writeLong(progress.holdLsn() == null ? 0 : progress.holdLsn().asLong());
      out.writeInt(progress.tables().size());
      for (TableSnapshot table : progress.tables()) {
        writeString16(out, table.snapshotId());
        writeString16(out, table.table().schema());
        writeString16(out, table.table().table());
        out.writeInt(table.remaining().size());
        for (KeyRange range : table.remaining()) {
          writeKey(out, range.after());
          writeKey(out, range.through());
          out.writeInt(range.acknowledged().size());
          for (List<String> key : range.acknowledged()) {
            writeKey(out, key);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a ByteArrayOutputStream does not throw
    }
    return bytes.toByteArray();
  }

  private static void writeString16(DataOutputStream out, String text) throws IOException {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    if (b.length > 0xFFFF) {
      throw new IllegalArgumentException("name of " + b.length + " bytes in snapshot progress");
    }
    out.writeShort(b.length);
    out.write(b);
  }

  private static void writeKey(DataOutputStream out, List<String> key) throws IOException {
    if (key == null) {
      out.writeShort(0);
      return;
    }
    if (key.size() > 0xFFFF) {
      throw new IllegalArgumentException("key of " + key.size() + " columns");
    }
    out.writeShort(key.size());
    for (String value : key) {
      byte[] b = value.getBytes(StandardCharsets.UTF_8);
      out.writeInt(b.length);
      out.write(b);
    }
  }

  private static SnapshotProgress decodeSnapshot(ByteBuffer in, String location, String slot) {
    int flags = in.get() & 0xFF;
    if (flags == 0) {
      return SnapshotProgress.NONE;
    }
    if ((flags & ~3) != 0 || (flags & 1) == 0) {
      throw corrupt(location, slot, "snapshot flags 0x" + Integer.toHexString(flags), null);
    }
    long hold = in.getLong();
    int tableCount = in.getInt();
    if (tableCount < 0 || tableCount > in.remaining() / 10) {
      throw corrupt(location, slot, "snapshot table count " + tableCount + " is too large", null);
    }
    List<TableSnapshot> tables = new ArrayList<>(tableCount);
    try {
      for (int t = 0; t < tableCount; t++) {
        String id = readString16(in);
        TableId table = new TableId(readString16(in), readString16(in));
        int rangeCount = in.getInt();
        if (rangeCount < 0 || rangeCount > in.remaining() / 8) {
          throw corrupt(location, slot, "table " + table + ": range count " + rangeCount, null);
        }
        List<KeyRange> ranges = new ArrayList<>(rangeCount);
        for (int r = 0; r < rangeCount; r++) {
          List<String> after = readKey(in, location, slot);
          List<String> through = readKey(in, location, slot);
          int ackCount = in.getInt();
          if (ackCount < 0 || ackCount > in.remaining() / 2) {
            throw corrupt(
                location, slot, "table " + table + ": acknowledged key count " + ackCount, null);
          }
          List<List<String>> acked = new ArrayList<>(ackCount);
          for (int a = 0; a < ackCount; a++) {
            List<String> key = readKey(in, location, slot);
            if (key == null) {
              throw corrupt(location, slot, "table " + table + ": an empty acknowledged key", null);
            }
            acked.add(key);
          }
          ranges.add(new KeyRange(after, through, acked));
        }
        tables.add(new TableSnapshot(id, table, ranges));
      }
      return new SnapshotProgress((flags & 2) != 0, hold == 0 ? null : PgLsn.of(hold), tables);
    } catch (IllegalArgumentException e) {
      throw corrupt(location, slot, "snapshot progress: " + e.getMessage(), e);
    }
  }

  private static String readString16(ByteBuffer in) {
    byte[] b = new byte[in.getShort() & 0xFFFF];
    in.get(b);
    return new String(b, StandardCharsets.UTF_8);
  }

  private static List<String> readKey(ByteBuffer in, String location, String slot) {
    int columns = in.getShort() & 0xFFFF;
    if (columns == 0) {
      return null;
    }
    List<String> key = new ArrayList<>(columns);
    for (int i = 0; i < columns; i++) {
      int length = in.getInt();
      if (length < 0 || length > in.remaining()) {
        throw corrupt(location, slot, "snapshot key value of " + length + " bytes", null);
      }
      byte[] b = new byte[length];
      in.get(b);
      key.add(new String(b, StandardCharsets.UTF_8));
    }
    return key;
  }

  /**
   * Decodes what {@link #encode} wrote.
   *
   * @param value the stored bytes, not null
   * @param slot the slot the value was stored for (its key or file name)
   * @param location where the value was read from, such as a file or a store URI; named in errors
   * @return the checkpoint, whose {@link CdcCheckpoint#slot()} is {@code slot}
   * @throws CdcStoreException naming {@code location} and {@code slot} if the value is not exactly
   *     a format-3, 2 or 1 checkpoint of {@code slot} with a matching checksum
   */
  public static CdcCheckpoint decode(byte[] value, String slot, String location) {
    if (value.length < FIXED_BYTES + 1) {
      throw corrupt(location, slot, value.length + " bytes, shorter than any checkpoint", null);
    }
    ByteBuffer in = ByteBuffer.wrap(value);
    int magic = in.getInt();
    if (magic != MAGIC) {
      throw corrupt(
          location,
          slot,
          String.format("it does not start with the magic number 0x%08X (\"DCKP\")", MAGIC)
              + (value[0] == '{' ? "; it looks like JSON, not a binary checkpoint" : ""),
          null);
    }
    int body = value.length - 4;
    int stored = ByteBuffer.wrap(value, body, 4).getInt();
    int computed = crc(value, body);
    if (stored != computed) {
      throw corrupt(
          location,
          slot,
          String.format(
              "CRC32C mismatch (stored 0x%08X, computed 0x%08X over %d bytes): the value is damaged",
              stored, computed, body),
          null);
    }
    int version = in.getShort() & 0xFFFF;
    if (version != FORMAT_VERSION && version != FORMAT_VERSION_2 && version != FORMAT_VERSION_1) {
      throw corrupt(
          location,
          slot,
          "format version "
              + version
              + "; this version of datum-cdc reads "
              + FORMAT_VERSION_1
              + " to "
              + FORMAT_VERSION
              + " (a newer datum-cdc wrote it: run that one, or delete the checkpoint and"
              + " create a new slot)",
          null);
    }
    ByteBuffer fields = ByteBuffer.wrap(value, in.position(), body - in.position()).slice();
    try {
      return fields(fields, slot, location, version);
    } catch (BufferUnderflowException e) {
      throw corrupt(location, slot, "it ends in the middle of a field", e);
    }
  }

  private static CdcCheckpoint fields(ByteBuffer in, String slot, String location, int version) {
    int slotLength = in.get() & 0xFF;
    if (slotLength < 1 || slotLength > SlotNames.MAX_LENGTH) {
      throw corrupt(location, slot, "slot name length " + slotLength + " is out of range", null);
    }
    byte[] slotBytes = new byte[slotLength];
    in.get(slotBytes);
    String storedSlot = new String(slotBytes, StandardCharsets.ISO_8859_1);
    if (!storedSlot.equals(slot)) {
      throw corrupt(
          location, slot, "it is the checkpoint of slot \"" + printable(storedSlot) + '"', null);
    }
    PgLsn watermark = PgLsn.of(in.getLong());
    int count = in.getInt();
    if (count < 0 || count > in.remaining() / TX_BYTES) {
      throw corrupt(
          location,
          slot,
          "transaction count " + Integer.toUnsignedString(count) + " is too large",
          null);
    }
    List<PartialTransaction> txs = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      PgLsn end = PgLsn.of(in.getLong());
      int eventCount = in.getInt();
      int rangeCount = in.getInt();
      if (rangeCount < 0 || rangeCount > in.remaining() / RANGE_BYTES) {
        throw corrupt(
            location,
            slot,
            "transaction "
                + end
                + ": range count "
                + Integer.toUnsignedString(rangeCount)
                + " is too large",
            null);
      }
      int[] ranges = new int[rangeCount * 2];
      for (int r = 0; r < ranges.length; r++) {
        ranges[r] = in.getInt();
      }
      try {
        PartialTransaction tx = PartialTransaction.ofRanges(end, eventCount, ranges);
        if (tx.acknowledgedRanges().length != ranges.length) {
          throw new IllegalArgumentException("adjacent acknowledged ranges of transaction " + end);
        }
        txs.add(tx);
      } catch (IllegalArgumentException e) {
        throw corrupt(location, slot, e.getMessage(), e);
      }
    }
    List<AcknowledgedRun> runs = new ArrayList<>();
    ClusterIdentity cluster = null;
    String publication = null;
    SnapshotProgress snapshot = SnapshotProgress.NONE;
    if (version >= FORMAT_VERSION_2) {
      int runCount = in.getInt();
      if (runCount < 0 || runCount > in.remaining() / RUN_BYTES) {
        throw corrupt(
            location,
            slot,
            "run count " + Integer.toUnsignedString(runCount) + " is too large",
            null);
      }
      for (int i = 0; i < runCount; i++) {
        PgLsn first = PgLsn.of(in.getLong());
        PgLsn last = PgLsn.of(in.getLong());
        try {
          runs.add(new AcknowledgedRun(first, last));
        } catch (IllegalArgumentException e) {
          throw corrupt(location, slot, e.getMessage(), e);
        }
      }
      int flag = in.get();
      if (flag == 1) {
        long systemIdentifier = in.getLong();
        int timeline = in.getInt();
        byte[] database = new byte[in.get() & 0xFF];
        in.get(database);
        try {
          cluster =
              new ClusterIdentity(
                  systemIdentifier, timeline, new String(database, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
          throw corrupt(location, slot, "cluster identity: " + e.getMessage(), e);
        }
      } else if (flag != 0) {
        throw corrupt(location, slot, "cluster flag " + flag + " is neither 0 nor 1", null);
      }
      int publicationLength = in.get() & 0xFF;
      if (publicationLength > 0) {
        byte[] name = new byte[publicationLength];
        in.get(name);
        publication = new String(name, StandardCharsets.UTF_8);
      }
      if (version >= FORMAT_VERSION) {
        snapshot = decodeSnapshot(in, location, slot);
      }
    }
    if (in.hasRemaining()) {
      throw corrupt(location, slot, in.remaining() + " bytes after the last field", null);
    }
    try {
      return new CdcCheckpoint(slot, watermark, txs, runs, cluster, publication, snapshot);
    } catch (IllegalArgumentException e) {
      throw corrupt(location, slot, e.getMessage(), e);
    }
  }

  private static int crc(byte[] bytes, int length) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, length);
    return (int) crc.getValue();
  }

  private static String printable(String text) {
    StringBuilder out = new StringBuilder();
    for (char c : text.toCharArray()) {
      out.append(
          c >= 0x20 && c < 0x7F && c != '"'
              ? String.valueOf(c)
              : String.format("\\x%02X", (int) c));
    }
    return out.toString();
  }

  private static CdcStoreException corrupt(
      String location, String slot, String what, Throwable cause) {
    return new CdcStoreException(
        "corrupt checkpoint of slot \"" + slot + "\" in " + location + ": " + what, cause);
  }
}
