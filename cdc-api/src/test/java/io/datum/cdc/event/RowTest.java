package io.datum.cdc.event;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;

class RowTest {

  private static final int INT4 = 23;
  private static final int TEXT = 25;

  @Test
  void undecodedColumnsAreListedAndCarriedIntoTheKeyRow() {
    List<ColumnInfo> columns =
        List.of(
            new ColumnInfo("id", INT4, -1, true),
            new ColumnInfo("a", TEXT, -1, false),
            new ColumnInfo("b", 50_000, -1, true));
    Row row = Row.of(columns, new Object[] {1, "x", new byte[] {1}}, new int[] {2});
    assertTrue(row.hasUndecoded());
    assertEquals(List.of("b"), row.undecodedColumns());
    assertTrue(row.isUndecoded(2));
    assertFalse(row.isUndecoded(0));
    assertThrows(IndexOutOfBoundsException.class, () -> row.isUndecoded(3));
    Row key = row.keyColumns();
    assertEquals(List.of("b"), key.undecodedColumns());
    assertTrue(key.isUndecoded(1));
    assertEquals("{id=1, a=x, b=undecoded:1 bytes}", row.toString());
    Row plain = Row.of(columns, new Object[] {1, "x", 2}, null);
    assertFalse(plain.hasUndecoded());
    assertEquals(List.of(), plain.undecodedColumns());
    // raw values are Strings or byte arrays; positions ascending and in range
    assertThrows(
        IllegalArgumentException.class,
        () -> Row.of(columns, new Object[] {1, "x", 2}, new int[] {2}));
    assertThrows(
        IllegalArgumentException.class,
        () -> Row.of(columns, new Object[] {"1", "x", "2"}, new int[] {2, 0}));
    assertThrows(
        IllegalArgumentException.class,
        () -> Row.of(columns, new Object[] {"1", "x", "2"}, new int[] {3}));
  }

  private static ColumnInfo col(String name, int type, boolean key) {
    return new ColumnInfo(name, type, -1, key);
  }

  /** id (key), note (text), big (text), gone (text): value, empty string, unchanged TOAST, NULL. */
  private static final List<ColumnInfo> COLUMNS =
      List.of(
          col("id", INT4, true),
          col("note", TEXT, false),
          col("big", TEXT, false),
          col("gone", TEXT, false));

  private static Row row() {
    return Row.of(COLUMNS, new Object[] {42, "", Row.UNCHANGED_TOAST, null});
  }

  @Test
  void getByIndexAndName() {
    Row row = Row.of(COLUMNS, new Object[] {1, "x", "y", "z"});
    assertEquals(4, row.size());
    assertEquals(1, row.get(0));
    assertEquals("x", row.get(1));
    assertEquals("y", row.get(2));
    assertEquals("z", row.get(3));
    assertEquals(1, row.get("id"));
    assertEquals("x", row.get("note"));
    assertEquals("y", row.get("big"));
    assertEquals("z", row.get("gone"));
    assertSame(COLUMNS, row.columns());
    assertEquals(col("note", TEXT, false), row.column(1));
    assertEquals(1, row.indexOf("note"));
    assertEquals(-1, row.indexOf("nope"));
    assertTrue(row.has("gone"));
    assertFalse(row.has("nope"));
    assertFalse(row.has("ID"));
  }

  @Test
  void nullUnchangedToastAndEmptyStringAreDistinct() {
    Row row = row();
    // empty string: a value
    assertEquals("", row.get(1));
    assertEquals("", row.get("note"));
    assertFalse(row.isNull(1));
    assertFalse(row.isUnchangedToast(1));
    // unchanged TOAST: neither a value nor NULL
    assertFalse(row.isNull(2));
    assertTrue(row.isUnchangedToast(2));
    // SQL NULL
    assertNull(row.get(3));
    assertNull(row.get("gone"));
    assertTrue(row.isNull(3));
    assertFalse(row.isUnchangedToast(3));
    // a plain value
    assertFalse(row.isNull(0));
    assertFalse(row.isUnchangedToast(0));
  }

  @Test
  void getOnUnchangedToastThrowsNamingTheColumn() {
    Row row = row();
    IllegalStateException byIndex = assertThrows(IllegalStateException.class, () -> row.get(2));
    assertEquals("column \"big\" is unchanged TOAST: its value was not sent", byIndex.getMessage());
    IllegalStateException byName = assertThrows(IllegalStateException.class, () -> row.get("big"));
    assertEquals("column \"big\" is unchanged TOAST: its value was not sent", byName.getMessage());
  }

  @Test
  void unknownColumnThrows() {
    Row row = row();
    NoSuchElementException e = assertThrows(NoSuchElementException.class, () -> row.get("nope"));
    assertEquals("row has no column \"nope\"", e.getMessage());
    NoSuchElementException nullName =
        assertThrows(NoSuchElementException.class, () -> row.get((String) null));
    assertEquals("row has no column \"null\"", nullName.getMessage());
  }

  @Test
  void indexOutOfRangeThrows() {
    Row row = row();
    assertThrows(IndexOutOfBoundsException.class, () -> row.get(4));
    assertThrows(IndexOutOfBoundsException.class, () -> row.get(-1));
    assertThrows(IndexOutOfBoundsException.class, () -> row.column(4));
  }

  @Test
  void keyColumnsNoneIsNull() {
    Row row = Row.of(List.of(col("a", INT4, false), col("b", TEXT, false)), new Object[] {1, "x"});
    assertNull(row.keyColumns());
  }

  @Test
  void keyColumnsOfEmptyRowIsNull() {
    assertNull(Row.of(List.of(), new Object[0]).keyColumns());
  }

  @Test
  void keyColumnsAllIsTheSameRow() {
    Row row = Row.of(List.of(col("a", INT4, true), col("b", TEXT, true)), new Object[] {1, "x"});
    assertSame(row, row.keyColumns());
  }

  @Test
  void keyColumnsSomeKeepsOnlyThose() {
    List<ColumnInfo> columns =
        List.of(
            col("tenant", INT4, true),
            col("note", TEXT, false),
            col("id", INT4, true),
            col("big", TEXT, false));
    Row row = Row.of(columns, new Object[] {7, "n", 9, Row.UNCHANGED_TOAST});
    Row key = row.keyColumns();
    assertEquals(2, key.size());
    assertEquals(List.of(col("tenant", INT4, true), col("id", INT4, true)), key.columns());
    assertEquals(7, key.get(0));
    assertEquals(9, key.get(1));
    assertEquals(9, key.get("id"));
    assertFalse(key.has("note"));
    assertFalse(key.has("big"));
    assertEquals(List.of(), key.unchangedToastColumns());
    Map<String, Object> expected = new LinkedHashMap<>();
    expected.put("tenant", 7);
    expected.put("id", 9);
    assertEquals(expected, key.toMap());
    assertEquals(List.of("tenant", "id"), new ArrayList<>(key.toMap().keySet()));
    assertThrows(UnsupportedOperationException.class, () -> key.columns().add(col("x", 1, true)));
  }

  @Test
  void keyColumnsKeepNullAndUnchangedToastStates() {
    List<ColumnInfo> columns =
        List.of(col("k1", TEXT, true), col("v", TEXT, false), col("k2", TEXT, true));
    Row key = Row.of(columns, new Object[] {null, "v", Row.UNCHANGED_TOAST}).keyColumns();
    assertTrue(key.isNull(0));
    assertTrue(key.isUnchangedToast(1));
    assertEquals(List.of("k2"), key.unchangedToastColumns());
  }

  @Test
  void unchangedToastColumns() {
    assertEquals(List.of("big"), row().unchangedToastColumns());
    Row none = Row.of(COLUMNS, new Object[] {1, null, "", "x"});
    assertEquals(List.of(), none.unchangedToastColumns());
    Row two = Row.of(COLUMNS, new Object[] {1, Row.UNCHANGED_TOAST, "y", Row.UNCHANGED_TOAST});
    assertEquals(List.of("note", "gone"), two.unchangedToastColumns());
    assertThrows(UnsupportedOperationException.class, () -> two.unchangedToastColumns().add("x"));
  }

  @Test
  void toMapOmitsUnchangedToastAndKeepsNull() {
    Map<String, Object> map = row().toMap();
    Map<String, Object> expected = new LinkedHashMap<>();
    expected.put("id", 42);
    expected.put("note", "");
    expected.put("gone", null);
    assertEquals(expected, map);
    assertEquals(List.of("id", "note", "gone"), new ArrayList<>(map.keySet()));
    assertTrue(map.containsKey("gone"));
    assertFalse(map.containsKey("big"));
    // a new mutable map each call
    map.put("extra", 1);
    assertEquals(expected, row().toMap());
  }

  @Test
  void ofWithSizeMismatchThrows() {
    IllegalArgumentException more =
        assertThrows(
            IllegalArgumentException.class, () -> Row.of(COLUMNS, new Object[] {1, 2, 3, 4, 5}));
    assertEquals("row has 4 columns but 5 values", more.getMessage());
    IllegalArgumentException fewer =
        assertThrows(IllegalArgumentException.class, () -> Row.of(COLUMNS, new Object[] {1}));
    assertEquals("row has 4 columns but 1 values", fewer.getMessage());
    IllegalArgumentException none =
        assertThrows(IllegalArgumentException.class, () -> Row.of(COLUMNS, new Object[0]));
    assertEquals("row has 4 columns but 0 values", none.getMessage());
  }

  @Test
  void toStringShowsStatesAndByteCounts() {
    List<ColumnInfo> columns =
        List.of(
            col("id", INT4, true),
            col("b", 17, false),
            col("t", TEXT, false),
            col("n", TEXT, false));
    Row row = Row.of(columns, new Object[] {1, new byte[] {1, 2, 3}, Row.UNCHANGED_TOAST, null});
    assertEquals("{id=1, b=3 bytes, t=UNCHANGED_TOAST, n=null}", row.toString());
    assertEquals("UNCHANGED_TOAST", Row.UNCHANGED_TOAST.toString());
  }

  @Test
  void unchangedToastMarkerIsByIdentityNotByString() {
    Row row = Row.of(COLUMNS, new Object[] {1, "UNCHANGED_TOAST", "x", "y"});
    assertEquals("UNCHANGED_TOAST", row.get(1));
    assertFalse(row.isUnchangedToast(1));
    assertEquals(List.of(), row.unchangedToastColumns());
    assertEquals(Arrays.asList("id", "note", "big", "gone"), new ArrayList<>(row.toMap().keySet()));
  }
}
