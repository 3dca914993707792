package io.datum.cdc;

/**
 * PostgreSQL's rule for replication slot names: 1 to 63 characters, each a lower-case ASCII letter,
 * a digit or an underscore (PostgreSQL source, {@code ReplicationSlotValidateName} in
 * src/backend/replication/slot.c; NAMEDATALEN is 64).
 *
 * <p>Stores check slot names with {@link #requireValid} before a name touches a file, a key or a
 * SQL statement.
 */
public final class SlotNames {

  /** The longest slot name PostgreSQL accepts, in characters (NAMEDATALEN - 1). */
  public static final int MAX_LENGTH = 63;

  /**
   * The last name {@link #requireValid} accepted: offsets are built for every event with the same
   * slot name object, so checking its identity spares the character loop (Strings are immutable).
   */
  private static volatile String lastValid;

  private SlotNames() {}

  /**
   * Returns whether {@code name} is a valid replication slot name.
   *
   * @param name the name to check, may be null (then false)
   * @return true if it matches {@code [a-z0-9_]{1,63}}
   */
  public static boolean isValid(String name) {
    if (name == null || name.isEmpty() || name.length() > MAX_LENGTH) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
        return false;
      }
    }
    return true;
  }

  /**
   * Returns {@code name} if it is a valid slot name.
   *
   * @param name the slot name to check
   * @return {@code name}
   * @throws CdcConfigurationException if it is null, empty, longer than 63 characters or holds a
   *     character other than {@code a-z}, {@code 0-9} and {@code _}; the message quotes it
   */
  public static String requireValid(String name) {
    if (name != null && name == lastValid) {
      return name; // the same String object as last time: every event's offset names its source's
    }
    if (!isValid(name)) {
      throw new CdcConfigurationException(
          "invalid replication slot name "
              + (name == null ? "null" : '"' + name + '"')
              + ": PostgreSQL slot names are 1 to 63 characters of a-z, 0-9 and _");
    }
    lastValid = name;
    return name;
  }
}
