package io.datum.cdc.kafka.connect;

/**
 * The builtin PostgreSQL types whose Connect representation is not plain text, with their oids
 * (src/include/catalog/pg_type.dat) and the Java type the library decodes them to
 * (docs/pgoutput.md, "Types"); and which builtin array types the library gives as a {@code List}.
 * Every other builtin oid (below {@value #FIRST_NORMAL_OID}) is a String of its text output.
 */
enum BuiltinType {
  BOOL(16, 1000),
  BYTEA(17, 1001),
  CHAR(18, 1002),
  NAME(19, 1003),
  INT8(20, 1016),
  INT2(21, 1005),
  INT4(23, 1007),
  TEXT(25, 1009),
  OID(26, 1028),
  JSON(114, 199),
  XML(142, 143),
  FLOAT4(700, 1021),
  FLOAT8(701, 1022),
  MONEY(790, 791),
  MACADDR(829, 1040),
  CIDR(650, 651),
  INET(869, 1041),
  BPCHAR(1042, 1014),
  VARCHAR(1043, 1015),
  DATE(1082, 1182),
  TIME(1083, 1183),
  TIMESTAMP(1114, 1115),
  TIMESTAMPTZ(1184, 1185),
  INTERVAL(1186, 1187),
  TIMETZ(1266, 1270),
  BIT(1560, 1561),
  VARBIT(1562, 1563),
  NUMERIC(1700, 1231),
  UUID(2950, 2951),
  PG_LSN(3220, 3221),
  JSONB(3802, 3807),
  JSONPATH(4072, 4073),
  // builtin ranges and multiranges: text, but arrays of them are Lists of their texts
  INT4RANGE(3904, 3905),
  NUMRANGE(3906, 3907),
  TSRANGE(3908, 3909),
  TSTZRANGE(3910, 3911),
  DATERANGE(3912, 3913),
  INT8RANGE(3926, 3927),
  INT4MULTIRANGE(4451, 6150),
  NUMMULTIRANGE(4532, 6151),
  TSMULTIRANGE(4533, 6152),
  TSTZMULTIRANGE(4534, 6153),
  DATEMULTIRANGE(4535, 6155),
  INT8MULTIRANGE(4536, 6157);

  /** PostgreSQL's {@code FirstNormalObjectId}: oids below it are builtin. */
  static final int FIRST_NORMAL_OID = 16384;

  private static final BuiltinType[] BY_OID = new BuiltinType[FIRST_NORMAL_OID];
  private static final BuiltinType[] BY_ARRAY_OID = new BuiltinType[FIRST_NORMAL_OID];

  static {
    for (BuiltinType t : values()) {
      BY_OID[t.oid] = t;
      BY_ARRAY_OID[t.arrayOid] = t;
    }
  }

  final int oid;
  final int arrayOid;

  BuiltinType(int oid, int arrayOid) {
    this.oid = oid;
    this.arrayOid = arrayOid;
  }

  /**
   * Returns whether an oid is builtin (below {@value #FIRST_NORMAL_OID}).
   *
   * @param oid a type oid (unsigned, as int)
   * @return true if builtin
   */
  static boolean isBuiltin(int oid) {
    return oid >= 0 && oid < FIRST_NORMAL_OID;
  }

  /**
   * Returns the row of a builtin scalar oid.
   *
   * @param oid a type oid
   * @return the row, or null if the oid is not listed (a text type, or not builtin)
   */
  static BuiltinType of(int oid) {
    return isBuiltin(oid) ? BY_OID[oid] : null;
  }

  /**
   * Returns the element row of a builtin array oid that the library gives as a {@code List}.
   *
   * @param oid a type oid
   * @return the element's row, or null if the oid is no such array (arrays of geometric types,
   *     {@code tid}, {@code macaddr8}, {@code tsvector}, {@code reg*}, ... are their text)
   */
  static BuiltinType elementOfArray(int oid) {
    return isBuiltin(oid) ? BY_ARRAY_OID[oid] : null;
  }
}
