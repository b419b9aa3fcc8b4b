"""The host path to a gpudf server with pyarrow.flight alone (no ADBC driver): a Flight SQL query
answered as an Arrow table in host memory, and Flight SQL's bulk ingest of an Arrow table.

These move every byte through host memory and gRPC; the device hand-off (``Connection.export``
and ``Connection.ingest``) does not. The examples use them as the baseline the hand-off is
measured against.
"""

import pyarrow.flight as flight

_SQL = "type.googleapis.com/arrow.flight.protocol.sql."


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, wire, payload):
    """One protobuf field: wire type 0 (a varint, given encoded) or 2 (length-delimited bytes)."""
    key = _varint(number << 3 | wire)
    return key + (_varint(len(payload)) + payload if wire == 2 else payload)


def _any(message, body):
    """A google.protobuf.Any holding Flight SQL's ``message`` with ``body`` (its encoded fields)."""
    return _field(1, 2, (_SQL + message).encode()) + _field(2, 2, body)


# CommandStatementIngest.TableDefinitionOptions.TableExistsOption
_IF_EXISTS = {"create": 1, "append": 2, "replace": 3}


def query(client, sql, options=None):
    """Runs ``sql`` (CommandStatementQuery) and returns its answer as a pyarrow Table in host memory."""
    descriptor = flight.FlightDescriptor.for_command(_any("CommandStatementQuery", _field(1, 2, sql.encode())))
    info = client.get_flight_info(descriptor, options) if options else client.get_flight_info(descriptor)
    tables = [client.do_get(e.ticket).read_all() for e in info.endpoints]
    return tables[0] if len(tables) == 1 else __import__("pyarrow").concat_tables(tables)


def bulk_ingest(client, table, data, mode="create"):
    """Loads pyarrow Table ``data`` into ``table`` (CommandStatementIngest: a missing table is made;
    an existing one fails, is appended to or replaced, by ``mode``) and returns the rows loaded."""
    options = _field(1, 0, _varint(1)) + _field(2, 0, _varint(_IF_EXISTS[mode]))
    command = _field(1, 2, options) + _field(2, 2, table.encode())
    writer, reader = client.do_put(flight.FlightDescriptor.for_command(_any("CommandStatementIngest", command)), data.schema)
    writer.write_table(data, max_chunksize=1 << 20)
    writer.done_writing()
    answer = reader.read()
    writer.close()
    return answer
