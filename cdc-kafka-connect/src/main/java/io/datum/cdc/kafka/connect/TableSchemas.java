package io.datum.cdc.kafka.connect;

import io.datum.cdc.TableId;
import io.datum.cdc.event.ColumnInfo;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;

/**
 * The schemas of every table, cached per column list: the library shares one {@code
 * List<ColumnInfo>} between the rows of a relation, so the hot path is one identity-map lookup; an
 * equal list met again (a new Relation message for an unchanged table, a snapshot's list) is found
 * by {@code equals}. Each column list not seen before for a table (a column added, dropped,
 * retyped) gets a new value schema; its key schema is rebuilt only when the key columns change.
 * Neither has a version, as in Debezium. Not thread-safe (one task thread).
 */
final class TableSchemas {

  /** Bounds the identity cache, should a caller build a new column list per row. */
  private static final int MAX_IDENTITY_ENTRIES = 4096;

  /**
   * One column list mapped onto a table's schema: a full list maps position i to field i; a
   * key-only list (the old key of a delete or update, {@code RelationInfo.keyColumns()}) maps each
   * of its columns to the field of the same name.
   *
   * @param target the table schema the row's Struct has
   * @param fieldOf for each position of the column list, the index of its field in {@code target}
   */
  record Layout(TableSchema target, int[] fieldOf) {}

  /** What is known of one table. */
  private static final class TableState {
    TableSchema current;
    final Map<List<ColumnInfo>, TableSchema> byColumns = new HashMap<>();
    final Map<List<ColumnInfo>, Layout> keyOnly = new HashMap<>();
    List<ColumnInfo> keyColumns;
    Schema key;
    TableSchema empty;
  }

  private final String topicPrefix;
  private final ValueMappers mappers;
  private final IdentityHashMap<List<ColumnInfo>, Layout> byIdentity = new IdentityHashMap<>();
  private final Map<TableId, TableState> tables = new HashMap<>();

  /**
   * @param topicPrefix the prefix of topics and schema names
   * @param mappers builds a column type's mapping
   */
  TableSchemas(String topicPrefix, ValueMappers mappers) {
    this.topicPrefix = topicPrefix;
    this.mappers = mappers;
  }

  /**
   * Returns the topic of a table, {@code <prefix>.<schema>.<table>}.
   *
   * @param table the table
   * @return the topic name
   */
  String topic(TableId table) {
    return topicPrefix + '.' + table.schema() + '.' + table.table();
  }

  /**
   * Returns the layout of a full row (an insert's, an update's new row, a snapshot row, a delete's
   * or update's old row with REPLICA IDENTITY FULL).
   *
   * @param table the row's table
   * @param columns the row's column list
   * @return the layout, whose target is the schema of exactly this column list
   */
  Layout full(TableId table, List<ColumnInfo> columns) {
    Layout cached = byIdentity.get(columns);
    if (cached != null && cached.target().table.equals(table)) {
      return cached;
    }
    TableState state = tables.computeIfAbsent(table, t -> new TableState());
    TableSchema schema = state.byColumns.get(columns);
    if (schema == null) {
      schema = build(table, columns, state);
      state.byColumns.put(List.copyOf(columns), schema);
    }
    state.current = schema;
    Layout layout = new Layout(schema, identity(columns.size()));
    remember(columns, layout);
    return layout;
  }

  /**
   * Returns the layout of an old row: onto {@code onto} (the new row's schema) when given, else
   * onto the table's current schema when the row's columns are a subset of it (a key-only old row),
   * else as a full row.
   *
   * @param table the row's table
   * @param columns the old row's column list
   * @param onto the schema of the event's new row, or null (a delete)
   * @return the layout
   */
  Layout old(TableId table, List<ColumnInfo> columns, TableSchema onto) {
    Layout cached = byIdentity.get(columns);
    if (cached != null
        && cached.target().table.equals(table)
        && (onto == null || cached.target() == onto)) {
      return cached;
    }
    TableState state = tables.get(table);
    TableSchema target = onto != null ? onto : state == null ? null : state.current;
    if (target != null) {
      if (target.columns.equals(columns)) {
        Layout layout = new Layout(target, identity(columns.size()));
        remember(columns, layout);
        return layout;
      }
      Layout layout = state.keyOnly.get(columns);
      if (layout == null || layout.target() != target) {
        int[] fieldOf = subset(columns, target);
        if (fieldOf != null) {
          layout = new Layout(target, fieldOf);
          state.keyOnly.put(List.copyOf(columns), layout);
        }
      }
      if (layout != null) {
        remember(columns, layout);
        return layout;
      }
    }
    return full(table, columns);
  }

  /**
   * Returns the schema a truncate of the table uses (and a delete without old row, which PostgreSQL
   * does not send): its current one, or, before any row of it was seen, one whose value has no
   * fields (and no version).
   *
   * @param table the table
   * @return the schema
   */
  TableSchema forTruncate(TableId table) {
    TableState state = tables.computeIfAbsent(table, t -> new TableState());
    if (state.current != null) {
      return state.current;
    }
    if (state.empty == null) {
      state.empty = new TableSchema(table, topic(table), List.of(), new ValueMapper[0], null);
    }
    return state.empty;
  }

  /**
   * Builds the schema of a column list not seen before for the table, and a new key schema if the
   * key columns changed.
   */
  private TableSchema build(TableId table, List<ColumnInfo> columns, TableState state) {
    ValueMapper[] columnMappers = new ValueMapper[columns.size()];
    for (int i = 0; i < columns.size(); i++) {
      ColumnInfo c = columns.get(i);
      ValueMapper mapper = mappers.mapper(c, 1);
      if (mapper.schema().type() == Schema.Type.ARRAY && c.arrayDimensions() > 1) {
        mapper = mappers.mapper(c, c.arrayDimensions());
      }
      columnMappers[i] = mapper;
    }
    int[] keyPositions = keyPositions(columns);
    List<ColumnInfo> keyColumns = new ArrayList<>(keyPositions.length);
    for (int position : keyPositions) {
      keyColumns.add(columns.get(position));
    }
    if (keyColumns.isEmpty()) {
      state.key = null;
      state.keyColumns = List.of();
    } else if (!keyColumns.equals(state.keyColumns)) {
      SchemaBuilder key = SchemaBuilder.struct().name(topic(table) + ".Key");
      for (int position : keyPositions) {
        key.field(columns.get(position).name(), columnMappers[position].schema());
      }
      state.key = key.build();
      state.keyColumns = List.copyOf(keyColumns);
    }
    return new TableSchema(table, topic(table), List.copyOf(columns), columnMappers, state.key);
  }

  /**
   * The key columns: those pgoutput flags as replica identity, in column order; but when it flags
   * every column (REPLICA IDENTITY FULL), the primary key's, in key order ({@link
   * ColumnInfo#primaryKeyPosition()}), or none if the table has no primary key (Debezium keys by
   * the primary key).
   */
  private static int[] keyPositions(List<ColumnInfo> columns) {
    int flagged = 0;
    for (ColumnInfo c : columns) {
      if (c.key()) {
        flagged++;
      }
    }
    if (flagged > 0 && flagged == columns.size()) {
      int[] primaryKey = primaryKey(columns);
      if (primaryKey != null) {
        return primaryKey; // empty without a primary key: no key, as in Debezium
      }
    }
    int[] positions = new int[flagged];
    for (int i = 0, k = 0; i < columns.size(); i++) {
      if (columns.get(i).key()) {
        positions[k++] = i;
      }
    }
    return positions;
  }

  /**
   * Returns the positions of the primary key's columns in key order, empty if the table has none,
   * or null if unknown (a column's position unknown, or a key column missing from the list).
   */
  private static int[] primaryKey(List<ColumnInfo> columns) {
    int size = 0;
    for (ColumnInfo c : columns) {
      if (c.primaryKeyPosition() < 0) {
        return null;
      }
      size = Math.max(size, c.primaryKeyPosition());
    }
    int[] positions = new int[size];
    Arrays.fill(positions, -1);
    for (int i = 0; i < columns.size(); i++) {
      int inKey = columns.get(i).primaryKeyPosition();
      if (inKey > 0) {
        positions[inKey - 1] = i;
      }
    }
    for (int p : positions) {
      if (p < 0) {
        return null;
      }
    }
    return positions;
  }

  /**
   * Maps each column to the target's field of the same name, type and typmod.
   *
   * @return the field indexes, or null if a column has no such field
   */
  private static int[] subset(List<ColumnInfo> columns, TableSchema target) {
    int[] fieldOf = new int[columns.size()];
    for (int i = 0; i < columns.size(); i++) {
      ColumnInfo c = columns.get(i);
      int found = -1;
      for (int f = 0; f < target.columns.size(); f++) {
        ColumnInfo t = target.columns.get(f);
        if (t.name().equals(c.name())
            && t.typeOid() == c.typeOid()
            && t.typeModifier() == c.typeModifier()) {
          found = f;
          break;
        }
      }
      if (found < 0) {
        return null;
      }
      fieldOf[i] = found;
    }
    return fieldOf;
  }

  /** Caches a layout by the identity of its column list (cleared when full). */
  private void remember(List<ColumnInfo> columns, Layout layout) {
    if (byIdentity.size() >= MAX_IDENTITY_ENTRIES) {
      byIdentity.clear();
    }
    byIdentity.put(columns, layout);
  }

  /** Returns {@code [0, 1, ..., n-1]}. */
  private static int[] identity(int n) {
    int[] fieldOf = new int[n];
    for (int i = 0; i < n; i++) {
      fieldOf[i] = i;
    }
    return fieldOf;
  }
}
