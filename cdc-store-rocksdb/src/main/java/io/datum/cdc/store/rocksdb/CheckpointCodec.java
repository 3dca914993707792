package io.datum.cdc.store.rocksdb;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SlotNames;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The binary form of a checkpoint stored as a RocksDB value, format 1. All integers are big-endian;
 * LSNs are unsigned 64-bit.
 *
 * <pre>
 * u8    format            1
 * u8    slot length       1..63
 * bytes slot              ASCII, [a-z0-9_], equal to the key
 * u64   watermark
 * u32   transaction count n
 * n times:
 *   u64 txEndLsn          strictly ascending, after the watermark
 *   u32 eventCount        at least 1
 *   u32 range count r
 *   r times: u32 from, u32 to   acknowledged event indexes [from, to], inclusive; ascending,
 *                                disjoint, within [0, eventCount)
 * u32   CRC32C            of every byte before it
 * </pre>
 *
 * <p>A checkpoint at a watermark only is {@code 18 + slot length} bytes. Reading is strict:
 * anything that is not exactly of this form is reported as corrupt.
 */
final class CheckpointCodec {

  /** The only format version this class writes and reads. */
  static final int FORMAT = 1;

  /** format, slot length, watermark, transaction count, checksum; plus the slot's bytes. */
  private static final int FIXED_BYTES = 1 + 1 + 8 + 4 + 4;

  private static final int TX_BYTES = 8 + 4 + 4;
  private static final int RANGE_BYTES = 4 + 4;

  private CheckpointCodec() {}

  /**
   * Encodes a checkpoint.
   *
   * @param checkpoint the checkpoint
   * @return the value to store under the slot's key
   * @throws IllegalArgumentException if the encoding would exceed 2 GiB (billions of
   *     acknowledgement ranges)
   */
  static byte[] encode(CdcCheckpoint checkpoint) {
    byte[] slot = checkpoint.slot().getBytes(StandardCharsets.US_ASCII);
    List<PartialTransaction> txs = checkpoint.acknowledgedBeyond();
    List<List<int[]>> ranges = new ArrayList<>(txs.size());
    long size = FIXED_BYTES + slot.length;
    for (PartialTransaction tx : txs) {
      List<int[]> r = ranges(tx);
      ranges.add(r);
      size += TX_BYTES + (long) RANGE_BYTES * r.size();
    }
    if (size > Integer.MAX_VALUE - 16) {
      throw new IllegalArgumentException(
          "the checkpoint of slot "
              + checkpoint.slot()
              + " would take "
              + size
              + " bytes, more than 2 GiB");
    }
    ByteBuffer out = ByteBuffer.allocate((int) size);
    out.put((byte) FORMAT);
    out.put((byte) slot.length);
    out.put(slot);
    out.putLong(checkpoint.watermark().asLong());
    out.putInt(txs.size());
    for (int i = 0; i < txs.size(); i++) {
      PartialTransaction tx = txs.get(i);
      out.putLong(tx.txEndLsn().asLong());
      out.putInt(tx.eventCount());
      out.putInt(ranges.get(i).size());
      for (int[] range : ranges.get(i)) {
        out.putInt(range[0]);
        out.putInt(range[1]);
      }
    }
    out.putInt(checksum(out.array(), out.position()));
    return out.array();
  }

  /**
   * Decodes a stored value.
   *
   * @param value the value read under the slot's key
   * @param slot the slot, from the key
   * @param database the database directory, for messages
   * @return the checkpoint
   * @throws CdcStoreException naming the database and the slot, if the value is not a well-formed
   *     format-1 checkpoint of {@code slot} with a matching checksum
   */
  static CdcCheckpoint decode(byte[] value, String slot, String database) {
    if (value.length < FIXED_BYTES + 1) {
      throw corrupt(
          database,
          slot,
          "the value is "
              + value.length
              + " bytes, shorter than any checkpoint ("
              + (FIXED_BYTES + 1)
              + " bytes at least)");
    }
    int body = value.length - 4;
    int stored = ByteBuffer.wrap(value, body, 4).getInt();
    int computed = checksum(value, body);
    int format = value[0] & 0xFF;
    if (stored != computed) {
      throw corrupt(
          database,
          slot,
          "CRC32C checksum mismatch (stored "
              + hex(stored)
              + ", computed "
              + hex(computed)
              + " over "
              + body
              + " bytes): the value is damaged"
              + (format == FORMAT
                  ? ""
                  : " (its format byte is "
                      + format
                      + "; this version reads format "
                      + FORMAT
                      + ")"));
    }
    if (format != FORMAT) {
      throw corrupt(
          database, slot, "unsupported format " + format + "; this version reads format " + FORMAT);
    }
    ByteBuffer in = ByteBuffer.wrap(value, 1, body - 1).slice();
    try {
      int slotLength = in.get() & 0xFF;
      if (slotLength < 1 || slotLength > SlotNames.MAX_LENGTH || slotLength > in.remaining()) {
        throw corrupt(database, slot, "slot name length " + slotLength + " is out of range");
      }
      byte[] slotBytes = new byte[slotLength];
      in.get(slotBytes);
      String storedSlot = new String(slotBytes, StandardCharsets.ISO_8859_1);
      if (!storedSlot.equals(slot)) {
        throw corrupt(
            database,
            slot,
            "it belongs to slot \""
                + printable(storedSlot)
                + "\", but is stored under the key \""
                + slot
                + '"');
      }
      PgLsn watermark = PgLsn.of(in.getLong());
      int count = in.getInt();
      if (count < 0 || count > in.remaining() / TX_BYTES) {
        throw corrupt(
            database,
            slot,
            "transaction count "
                + Integer.toUnsignedString(count)
                + " does not fit in the "
                + in.remaining()
                + " remaining bytes");
      }
      List<PartialTransaction> txs = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        txs.add(transaction(in, database, slot, i));
      }
      if (in.hasRemaining()) {
        throw corrupt(
            database, slot, in.remaining() + " unexpected bytes after the last transaction");
      }
      try {
        return new CdcCheckpoint(slot, watermark, txs);
      } catch (IllegalArgumentException e) {
        throw corrupt(database, slot, e.getMessage(), e);
      }
    } catch (BufferUnderflowException e) {
      throw corrupt(database, slot, "the value ends in the middle of a field (truncated)", e);
    }
  }

  private static PartialTransaction transaction(
      ByteBuffer in, String database, String slot, int i) {
    String where = "transaction " + i;
    PgLsn end = PgLsn.of(in.getLong());
    int eventCount = in.getInt();
    if (eventCount < 1) {
      throw corrupt(
          database,
          slot,
          where + " (" + end + ") has event count " + eventCount + ", must be at least 1");
    }
    int rangeCount = in.getInt();
    if (rangeCount < 0 || rangeCount > in.remaining() / RANGE_BYTES) {
      throw corrupt(
          database,
          slot,
          where
              + " ("
              + end
              + "): range count "
              + Integer.toUnsignedString(rangeCount)
              + " does not fit in the "
              + in.remaining()
              + " remaining bytes");
    }
    int[] acknowledged = new int[rangeCount * 2];
    long previousEnd = -1;
    for (int r = 0; r < rangeCount; r++) {
      int from = in.getInt();
      int to = in.getInt();
      if (from < 0 || to >= eventCount || from > to) {
        throw corrupt(
            database,
            slot,
            where
                + " ("
                + end
                + "): acknowledged range ["
                + from
                + ", "
                + to
                + "] is out of bounds for event count "
                + eventCount);
      }
      if (from <= previousEnd) {
        throw corrupt(
            database,
            slot,
            where
                + " ("
                + end
                + "): acknowledged range ["
                + from
                + ", "
                + to
                + "] overlaps or precedes the range before it");
      }
      acknowledged[2 * r] = from;
      acknowledged[2 * r + 1] = to + 1;
      previousEnd = to;
    }
    try {
      return PartialTransaction.ofRanges(end, eventCount, acknowledged);
    } catch (IllegalArgumentException e) {
      throw corrupt(database, slot, where + ": " + e.getMessage(), e);
    }
  }

  /** Returns the acknowledged events as ascending, disjoint, non-adjacent inclusive ranges. */
  private static List<int[]> ranges(PartialTransaction tx) {
    int[] halfOpen = tx.acknowledgedRanges();
    List<int[]> ranges = new ArrayList<>(halfOpen.length / 2);
    for (int i = 0; i < halfOpen.length; i += 2) {
      ranges.add(new int[] {halfOpen[i], halfOpen[i + 1] - 1});
    }
    return ranges;
  }

  private static int checksum(byte[] bytes, int length) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, 0, length);
    return (int) crc.getValue();
  }

  private static String hex(int value) {
    return String.format("0x%08X", value);
  }

  private static String printable(String text) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
        out.append(c);
      } else {
        out.append(String.format("\\x%02X", (int) c));
      }
    }
    return out.toString();
  }

  private static CdcStoreException corrupt(String database, String slot, String what) {
    return corrupt(database, slot, what, null);
  }

  private static CdcStoreException corrupt(
      String database, String slot, String what, Throwable cause) {
    return new CdcStoreException(
        "corrupt checkpoint of slot \""
            + slot
            + "\" in rocksdb checkpoint store "
            + database
            + ": "
            + what,
        cause);
  }
}
