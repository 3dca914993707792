package io.datum.cdc.event;

import io.datum.cdc.event.PgType.Kind;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The builtin types {@link PgType#builtin} describes without a catalog query: oid, {@code typname},
 * {@code typtype} and array type oid as src/include/catalog/pg_type.dat declares them (PostgreSQL
 * 14 to 18 agree on these rows). They are the types datum-cdc's decoders know ({@code
 * io.datum.cdc.core.types.PgBuiltinType}, which a test checks against this table) and the builtin
 * ranges and multiranges (pg_range.dat), each with its array type.
 */
final class BuiltinTypes {

  private static final Map<Integer, PgType> BY_OID = new HashMap<>();

  static {
    add(16, "bool", Kind.BASE, 1000);
    add(17, "bytea", Kind.BASE, 1001);
    add(18, "char", Kind.BASE, 1002);
    add(19, "name", Kind.BASE, 1003);
    add(20, "int8", Kind.BASE, 1016);
    add(21, "int2", Kind.BASE, 1005);
    add(23, "int4", Kind.BASE, 1007);
    add(25, "text", Kind.BASE, 1009);
    add(26, "oid", Kind.BASE, 1028);
    add(114, "json", Kind.BASE, 199);
    add(700, "float4", Kind.BASE, 1021);
    add(701, "float8", Kind.BASE, 1022);
    add(1042, "bpchar", Kind.BASE, 1014);
    add(1043, "varchar", Kind.BASE, 1015);
    add(1082, "date", Kind.BASE, 1182);
    add(1083, "time", Kind.BASE, 1183);
    add(1114, "timestamp", Kind.BASE, 1115);
    add(1184, "timestamptz", Kind.BASE, 1185);
    add(1186, "interval", Kind.BASE, 1187);
    add(1266, "timetz", Kind.BASE, 1270);
    add(1700, "numeric", Kind.BASE, 1231);
    add(2950, "uuid", Kind.BASE, 2951);
    add(3802, "jsonb", Kind.BASE, 3807);
    add(142, "xml", Kind.BASE, 143);
    add(790, "money", Kind.BASE, 791);
    add(650, "cidr", Kind.BASE, 651);
    add(869, "inet", Kind.BASE, 1041);
    add(829, "macaddr", Kind.BASE, 1040);
    add(1560, "bit", Kind.BASE, 1561);
    add(1562, "varbit", Kind.BASE, 1563);
    add(3220, "pg_lsn", Kind.BASE, 3221);
    add(4072, "jsonpath", Kind.BASE, 4073);
    add(22, "int2vector", Kind.BASE, 1006);
    add(27, "tid", Kind.BASE, 1010);
    add(28, "xid", Kind.BASE, 1011);
    add(29, "cid", Kind.BASE, 1012);
    add(30, "oidvector", Kind.BASE, 1013);
    add(600, "point", Kind.BASE, 1017);
    add(601, "lseg", Kind.BASE, 1018);
    add(602, "path", Kind.BASE, 1019);
    add(603, "box", Kind.BASE, 1020);
    add(604, "polygon", Kind.BASE, 1027);
    add(628, "line", Kind.BASE, 629);
    add(705, "unknown", Kind.PSEUDO, 0);
    add(718, "circle", Kind.BASE, 719);
    add(774, "macaddr8", Kind.BASE, 775);
    add(1790, "refcursor", Kind.BASE, 2201);
    add(2970, "txid_snapshot", Kind.BASE, 2949);
    add(3614, "tsvector", Kind.BASE, 3643);
    add(5038, "pg_snapshot", Kind.BASE, 5039);
    add(5069, "xid8", Kind.BASE, 271);
    add(3904, "int4range", Kind.RANGE, 3905);
    add(3906, "numrange", Kind.RANGE, 3907);
    add(3908, "tsrange", Kind.RANGE, 3909);
    add(3910, "tstzrange", Kind.RANGE, 3911);
    add(3912, "daterange", Kind.RANGE, 3913);
    add(3926, "int8range", Kind.RANGE, 3927);
    add(4451, "int4multirange", Kind.MULTIRANGE, 6150);
    add(4532, "nummultirange", Kind.MULTIRANGE, 6151);
    add(4533, "tsmultirange", Kind.MULTIRANGE, 6152);
    add(4534, "tstzmultirange", Kind.MULTIRANGE, 6153);
    add(4535, "datemultirange", Kind.MULTIRANGE, 6155);
    add(4536, "int8multirange", Kind.MULTIRANGE, 6157);
  }

  private BuiltinTypes() {}

  private static void add(int oid, String name, Kind kind, int arrayOid) {
    PgType type = new PgType(oid, "pg_catalog", name, kind, null, null, -1, List.of());
    BY_OID.put(oid, type);
    if (arrayOid != 0) {
      BY_OID.put(arrayOid, PgType.arrayOf(arrayOid, "pg_catalog", "_" + name, type));
    }
  }

  /**
   * Returns the type of a builtin oid in the table.
   *
   * @param oid a type oid
   * @return the type, or null if the table does not hold the oid
   */
  static PgType of(int oid) {
    return BY_OID.get(oid);
  }
}
