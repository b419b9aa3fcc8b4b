"""gpudf's Python client for the device hand-off, both ways.

Export: a gpudf server on the GPU backend runs a query and keeps the result in device memory;
this client maps those buffers into its own process through CUDA IPC, so CuPy and PyTorch work
on them where they are, with no copy through the host. The server holds the memory under a
lease until the result is closed (or the lease expires): arrays taken from a result must not be
used after it is closed. Each result lives in device memory of its own: its handles map nothing
else of the server's.

Ingest: device arrays of this process (CuPy, PyTorch, anything with ``__cuda_array_interface__``
or ``__dlpack__``) become a table on the server, which maps them, copies them device to device
into its own memory and checks them; the call returns once the server holds its copy, so the
arrays may then be changed or freed.

    import gpudf_client
    with gpudf_client.connect("grpc://localhost:8815") as conn:
        with conn.export("SELECT l_extendedprice, l_discount FROM lineitem") as result:
            price = result["l_extendedprice"].to_cupy()      # a view, no copy
            t = torch.from_dlpack(result["l_discount"])      # DLPack, no copy
        conn.ingest("scores", {"id": ids, "score": torch_scores,
                               "label": gpudf_client.strings(offsets, chars, valid=mask)})

Needs pyarrow (Flight) and CuPy; PyTorch only for DLPack consumers.
"""

import base64
import ctypes
import json
import time

import cupy
import numpy
import pyarrow
import pyarrow.flight as flight
import pyarrow.ipc

__all__ = ["connect", "Connection", "Result", "Column", "column", "strings", "EXPORT", "RELEASE", "IMPORT", "UNMAP"]

EXPORT = "gpudf.export_device"
RELEASE = "gpudf.release"
IMPORT = "gpudf.import_device"
UNMAP = "gpudf.unmap_device"

# gpudf's fixed-width types as NumPy dtypes (DATE: int32 days since the epoch; TIMESTAMP: int64
# in the column's unit; DECIMAL up to precision 18: int64 scaled by 10**scale)
_DTYPES = {
    "INT8": numpy.int8, "INT16": numpy.int16, "INT32": numpy.int32, "INT64": numpy.int64,
    "FLOAT32": numpy.float32, "FLOAT64": numpy.float64, "DATE": numpy.int32, "TIMESTAMP": numpy.int64,
}


def connect(location, user=None, password=None):
    """A connection to the gpudf server at ``location`` (``grpc://host:port`` or ``grpc+tls://...``)."""
    return Connection(location, user, password)


class Connection:
    """A Flight connection to a gpudf server, for hand-offs; close it (or use ``with``)."""

    def __init__(self, location, user=None, password=None):
        self._client = flight.FlightClient(location)
        headers = []
        if user is not None:
            headers.append(self._client.authenticate_basic_token(user, password or ""))
        self._options = flight.FlightCallOptions(headers=headers)
        # handle -> _Kept: an array in that allocation, held so that the allocation outlives the server's mapping
        self._kept = {}

    def export(self, sql, ttl_seconds=None):
        """Runs ``sql`` on the server and maps its device-resident result here; close the result when done."""
        request = {"sql": sql}
        if ttl_seconds is not None:
            request["ttl_seconds"] = float(ttl_seconds)
        results = list(self._client.do_action(flight.Action(EXPORT, json.dumps(request).encode()), self._options))
        if len(results) != 1:
            raise RuntimeError("the server answered an export with %d results, not 1" % len(results))
        descriptor = json.loads(results[0].body.to_pybytes())
        try:
            return Result(self, descriptor)
        except BaseException:
            self.release(descriptor["lease"])
            raise

    def ingest(self, table, columns, mode="create", keep_mapped=False):
        """Makes table ``table`` on the server from this process's device arrays; returns the server's answer (a dict).

        ``columns`` maps each column's name to a device array (CuPy, PyTorch, anything with
        ``__cuda_array_interface__`` or ``__dlpack__``: 1-D and contiguous; int8 to int64,
        float32, float64 or bool), or to what :func:`column` or :func:`strings` make (NULLs, DATE,
        TIMESTAMP, DECIMAL, STRING). ``mode``: ``create`` (the table must not exist), ``append``
        (as an INSERT: values convert to the table's types) or ``replace``. The server copies the
        arrays before it answers: they may be changed or freed once this returns.

        With ``keep_mapped`` the server keeps the arrays' allocations mapped, so that the next
        ingest from the same memory (a buffer written again and again) skips mapping it, which
        costs the driver more than the copy. This connection then holds a reference to an array in
        each such allocation until :meth:`unmap` (or :meth:`close`) tells the server to unmap them.
        """
        start = time.perf_counter()
        specs = [(name, value if isinstance(value, _Spec) else column(value)) for name, value in columns.items()]
        if not specs:
            raise ValueError("an ingest needs at least one column")
        rows = {spec.rows for _, spec in specs}
        if len(rows) != 1:
            raise ValueError("columns of one table have one length, not %s" % sorted(rows))
        allocations = _Allocations(self._kept)
        described = [spec.describe(name, allocations) for name, spec in specs]
        # the producer's kernels must be done before the server reads the memory
        cupy.cuda.runtime.deviceSynchronize()
        request = {"table": table, "mode": mode, "rows": rows.pop(), "allocations": allocations.list,
                   "columns": described, "keep_mapped": bool(keep_mapped)}
        if keep_mapped:
            # held before asking: the server may keep a mapping even if the import then fails
            for a, owner in zip(allocations.list, allocations.owners):
                self._kept.setdefault(a["handle"], _Kept(owner, allocations.bases[a["handle"]], a["size"]))
        body = json.dumps(request).encode()
        asked = time.perf_counter()
        results = list(self._client.do_action(flight.Action(IMPORT, body), self._options))
        if len(results) != 1:
            raise RuntimeError("the server answered an import with %d results, not 1" % len(results))
        answer = json.loads(results[0].body.to_pybytes())
        # where the time went on this side: describing the arrays (with the driver's help), and the call
        answer["client_prepare_ms"] = (asked - start) * 1e3
        answer["client_call_ms"] = (time.perf_counter() - asked) * 1e3
        return answer

    def unmap(self):
        """Tells the server to unmap every allocation kept by ``ingest(..., keep_mapped=True)``, then lets them go."""
        if not self._kept:
            return {"unmapped": 0}
        body = json.dumps({"handles": list(self._kept)}).encode()
        results = list(self._client.do_action(flight.Action(UNMAP, body), self._options))
        if len(results) != 1:
            raise RuntimeError("the server answered an unmap with %d results, not 1" % len(results))
        self._kept.clear()
        return json.loads(results[0].body.to_pybytes())

    def release(self, lease):
        """Ends ``lease`` on the server (``Result.close`` does this)."""
        list(self._client.do_action(flight.Action(RELEASE, lease.encode()), self._options))

    def close(self):
        try:
            self.unmap()
        finally:
            self._client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Result:
    """A query result mapped from the server's device memory: columns by name, under a lease."""

    def __init__(self, connection, descriptor):
        self._connection = connection
        self.descriptor = descriptor
        self.lease = descriptor["lease"]
        self.rows = descriptor["rows"]
        self.device = descriptor["device"]
        # the result's Arrow schema (a DECIMAL column's values are 8 bytes on the device up to precision 18)
        self.schema = pyarrow.ipc.read_schema(pyarrow.py_buffer(base64.b64decode(descriptor["arrow_schema"])))
        self._pointers = []
        self._closed = False
        with cupy.cuda.Device(self.device):
            try:
                for allocation in descriptor["allocations"]:
                    handle = base64.b64decode(allocation["handle"])
                    self._pointers.append(cupy.cuda.runtime.ipcOpenMemHandle(
                        handle, cupy.cuda.runtime.cudaIpcMemLazyEnablePeerAccess))
            except BaseException:
                self._unmap()
                raise
        self.columns = {c["name"]: Column(self, c) for c in descriptor["columns"]}

    def __getitem__(self, name):
        self._check_open()
        return self.columns[name]

    def _address(self, region):
        self._check_open()
        return self._pointers[region["allocation"]] + region["offset"]

    def _check_open(self):
        if self._closed:
            raise ValueError("the result is closed: its device memory is the server's again")

    def _unmap(self):
        with cupy.cuda.Device(self.device):
            for p in self._pointers:
                cupy.cuda.runtime.ipcCloseMemHandle(p)
        self._pointers = []

    def close(self):
        """Unmaps the memory and releases the lease; arrays taken from the result must not be used after this."""
        if self._closed:
            raise ValueError("result closed twice")
        cupy.cuda.Device(self.device).synchronize()
        self._unmap()
        self._closed = True
        self._connection.release(self.lease)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Column:
    """One column of a :class:`Result`, in Arrow's layout on the device.

    Fixed-width columns expose ``__cuda_array_interface__`` (version 3) and DLPack. Nulls are
    not in those views: ``null_count`` says whether there are any and ``validity()`` gives the
    LSB-first bitmap (1 = valid). STRING columns give ``offsets()`` (int32, rows + 1) and
    ``chars()`` (uint8); BOOL columns are bit-packed, ``to_cupy()`` unpacks them into a new array.
    """

    def __init__(self, result, info):
        self._result = result
        self.info = info
        self.name = info["name"]
        self.type = info["type"]
        self.null_count = info["null_count"]
        self.scale = info["scale"]
        self.rows = result.rows

    @property
    def dtype(self):
        if self.type == "DECIMAL":
            if self.info["byte_width"] != 8:
                raise TypeError("column %r is a DECIMAL(%d, %d) of 16-byte values, which CuPy has no dtype for"
                                % (self.name, self.info["precision"], self.scale))
            return numpy.dtype(numpy.int64)
        if self.type not in _DTYPES:
            raise TypeError("column %r is %s, which is not a fixed-width array" % (self.name, self.type))
        return numpy.dtype(_DTYPES[self.type])

    def _view(self, region, dtype, count):
        memory = cupy.cuda.UnownedMemory(self._result._address(region), region["size"], self._result,
                                         device_id=self._result.device)
        return cupy.ndarray((count,), dtype=dtype, memptr=cupy.cuda.MemoryPointer(memory, 0))

    def to_cupy(self):
        """The values as a CuPy array viewing the server's memory (BOOL: unpacked into a new array)."""
        if self.type == "BOOL":
            bits = self._view(self.info["data"], numpy.uint8, self.info["data"]["size"])
            return cupy.unpackbits(bits, bitorder="little")[: self.rows].astype(cupy.bool_)
        return self._view(self.info["data"], self.dtype, self.rows)

    def validity(self):
        """The validity bitmap as a uint8 CuPy view, or None when no row is null."""
        region = self.info["validity"]
        return None if region is None else self._view(region, numpy.uint8, region["size"])

    def offsets(self):
        """STRING: the int32 offsets (rows + 1) as a CuPy view."""
        if self.type != "STRING":
            raise TypeError("column %r is %s, not STRING" % (self.name, self.type))
        return self._view(self.info["offsets"], numpy.int32, self.rows + 1)

    def chars(self):
        """STRING: the UTF-8 bytes as a uint8 CuPy view."""
        if self.type != "STRING":
            raise TypeError("column %r is %s, not STRING" % (self.name, self.type))
        return self._view(self.info["data"], numpy.uint8, self.info["data"]["size"])

    @property
    def __cuda_array_interface__(self):
        return {
            "shape": (self.rows,),
            "typestr": self.dtype.str,
            "data": (self._result._address(self.info["data"]), False),
            "strides": None,
            "version": 3,
            # the server finished its work on the result before it answered
            "stream": None,
        }

    def __dlpack__(self, stream=None, **kwargs):
        return self.to_cupy().__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return (2, self._result.device)  # kDLCUDA


# ---- ingest ----

# NumPy dtypes as gpudf types, for arrays given without a type
_TYPES = {numpy.dtype(numpy.int8): "INT8", numpy.dtype(numpy.int16): "INT16", numpy.dtype(numpy.int32): "INT32",
          numpy.dtype(numpy.int64): "INT64", numpy.dtype(numpy.float32): "FLOAT32", numpy.dtype(numpy.float64): "FLOAT64",
          numpy.dtype(numpy.bool_): "BOOL"}
# gpudf types given explicitly, with the dtype their values must have (DECIMAL: up to precision 18)
_STORED = {"DATE": numpy.dtype(numpy.int32), "TIMESTAMP": numpy.dtype(numpy.int64), "DECIMAL": numpy.dtype(numpy.int64)}


def _device_array(value, what):
    """``value`` as a CuPy array over the same memory (no copy): through __cuda_array_interface__, else DLPack."""
    if isinstance(value, cupy.ndarray):
        array = value
    elif hasattr(value, "__cuda_array_interface__"):
        array = cupy.asarray(value)
    elif hasattr(value, "__dlpack__"):
        array = cupy.from_dlpack(value)
    else:
        raise TypeError("%s is not a device array (no __cuda_array_interface__ or __dlpack__): %r" % (what, type(value)))
    if array.ndim != 1 or not array.flags.c_contiguous:
        raise ValueError("%s must be one contiguous dimension, not shape %s" % (what, array.shape))
    return array


def _bitmap(valid, rows, what):
    """The validity of a column as an LSB-first bitmap on the device and its NULL count, or (None, 0).

    ``valid`` is a bool mask (True = valid), packed here, or an Arrow bitmap already packed
    (uint8, LSB-first, 1 = valid, at least (rows + 7) // 8 bytes), taken as it is.
    """
    if valid is None:
        return None, 0
    given = _device_array(valid, what)
    if given.dtype == numpy.uint8:
        if given.size < (rows + 7) // 8:
            raise ValueError("%s: a bitmap of %d rows needs %d bytes, not %d" % (what, rows, (rows + 7) // 8, given.size))
        valid_rows = int(cupy.unpackbits(given[: (rows + 7) // 8], bitorder="little")[:rows].sum())
        return given, rows - valid_rows
    if given.dtype != numpy.bool_ or given.size != rows:
        raise ValueError("%s must be a bool mask of %d rows (True = valid) or a uint8 Arrow bitmap, not %s of %d"
                         % (what, rows, given.dtype, given.size))
    return cupy.packbits(given, bitorder="little"), int(rows - int(given.sum()))


class _Spec:
    """A column to ingest: its type, its rows and its device buffers (each a CuPy array kept alive here)."""

    def __init__(self, type_, rows, data, offsets=None, validity=None, nulls=0, precision=0, scale=0, time_unit=None,
                 time_zone=None, byte_width=0):
        self.type, self.rows, self.data, self.offsets, self.validity, self.nulls = type_, rows, data, offsets, validity, nulls
        self.precision, self.scale, self.time_unit, self.time_zone, self.byte_width = precision, scale, time_unit, time_zone, byte_width

    def describe(self, name, allocations):
        region = lambda a: None if a is None else allocations.region(a)
        return {"name": name, "type": self.type, "precision": self.precision, "scale": self.scale,
                "time_unit": self.time_unit, "time_zone": self.time_zone, "byte_width": self.byte_width,
                "null_count": self.nulls, "data": region(self.data), "offsets": region(self.offsets),
                "validity": region(self.validity)}


def column(values, valid=None, type=None, precision=None, scale=0, time_unit="MICROSECOND", time_zone=None):
    """A fixed-width column to ingest: ``values`` a device array; ``valid`` None, a bool mask (True = valid) or an Arrow bitmap (uint8).

    Without ``type`` the dtype decides (int8..int64, float32, float64, bool). ``type="DATE"``:
    int32 days since 1970-01-01; ``"TIMESTAMP"``: int64 in ``time_unit`` (SECOND, MILLISECOND,
    MICROSECOND, NANOSECOND), zoned when ``time_zone`` is given; ``"DECIMAL"``: int64 unscaled
    values with ``precision`` (at most 18) digits and ``scale``.
    """
    array = _device_array(values, "a column's values")
    rows = int(array.size)
    if type is None:
        if array.dtype not in _TYPES:
            raise TypeError("gpudf has no column type for dtype %s (int8..int64, float32, float64, bool)" % array.dtype)
        type = _TYPES[array.dtype]
    elif type not in _STORED:
        raise ValueError("type is DATE, TIMESTAMP or DECIMAL (others come from the dtype), not %r" % type)
    elif array.dtype != _STORED[type]:
        raise TypeError("a %s column's values are %s, not %s" % (type, _STORED[type], array.dtype))
    if type == "DECIMAL" and (precision is None or not 1 <= precision <= 18):
        raise ValueError("a DECIMAL column of int64 values needs a precision from 1 to 18, not %r" % precision)
    validity, nulls = _bitmap(valid, rows, "valid")
    if type == "BOOL":
        return _Spec("BOOL", rows, cupy.packbits(array, bitorder="little"), validity=validity, nulls=nulls)
    return _Spec(type, rows, array, validity=validity, nulls=nulls, precision=precision or 0, scale=scale if type == "DECIMAL" else 0,
                 time_unit=time_unit if type == "TIMESTAMP" else None, time_zone=time_zone if type == "TIMESTAMP" else None,
                 byte_width=array.dtype.itemsize)


def strings(offsets, chars, valid=None):
    """A STRING column to ingest: int32 ``offsets`` (rows + 1) into UTF-8 ``chars`` (uint8), as Arrow lays them out."""
    offsets = _device_array(offsets, "a STRING column's offsets")
    chars = _device_array(chars, "a STRING column's chars")
    if offsets.dtype != numpy.int32 or offsets.size < 1:
        raise TypeError("a STRING column's offsets are int32, rows + 1 of them, not %s of %d" % (offsets.dtype, offsets.size))
    if chars.dtype != numpy.uint8:
        raise TypeError("a STRING column's chars are uint8, not %s" % chars.dtype)
    rows = int(offsets.size) - 1
    validity, nulls = _bitmap(valid, rows, "valid")
    return _Spec("STRING", rows, chars, offsets=offsets, validity=validity, nulls=nulls)


class _Kept:
    """An allocation the server keeps mapped: an array in it (which keeps it alive), its base and size."""

    def __init__(self, owner, base, size):
        self.owner, self.base, self.size = owner, base, size


class _Allocations:
    """The driver allocations that hold a table's buffers: each exported once as a CUDA IPC handle.

    ``kept`` (handle -> :class:`_Kept`) are allocations the server keeps mapped: alive while the
    connection holds them, so their base, size and handle are known without asking the driver.
    """

    def __init__(self, kept):
        self.list = []
        # per allocation, the first array seen in it (what keeps the allocation alive)
        self.owners = []
        # handle -> base address
        self.bases = {}
        self._index = {}
        self._kept = [(k.base, k.size, h) for h, k in kept.items()]

    def _lookup(self, pointer):
        """The base, size and handle (base64) of the allocation holding ``pointer``."""
        for base, size, handle in self._kept:
            if base <= pointer < base + size:
                return base, size, handle
        base, size = _address_range(pointer)
        if base in self._index:
            return base, size, self.list[self._index[base]]["handle"]
        return base, size, base64.b64encode(bytes(cupy.cuda.runtime.ipcGetMemHandle(base))).decode()

    def region(self, array):
        if array.nbytes == 0:
            # an empty array may have no memory behind it (a null pointer): one byte of its own stands in
            if not hasattr(self, "_empty"):
                self._empty = cupy.zeros(1, numpy.uint8)
            return dict(self.region(self._empty), size=0)
        pointer = int(array.data.ptr)
        base, size, handle = self._lookup(pointer)
        if base not in self._index:
            self._index[base] = len(self.list)
            self.list.append({"handle": handle, "size": size})
            self.owners.append(array)
            self.bases[handle] = base
        return {"allocation": self._index[base], "offset": pointer - base, "size": int(array.nbytes)}


_libcuda = None


def _address_range(pointer):
    """The base and size of the driver allocation holding device address ``pointer`` (cuMemGetAddressRange)."""
    global _libcuda
    if _libcuda is None:
        _libcuda = ctypes.CDLL("libcuda.so.1")
    base = ctypes.c_uint64()
    size = ctypes.c_size_t()
    rc = _libcuda.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(pointer))
    if rc != 0:
        raise RuntimeError("cuMemGetAddressRange failed (CUresult %d) for address 0x%x" % (rc, pointer))
    return base.value, size.value
