"""gpudf's Python client for the device hand-off.

A gpudf server on the GPU backend runs a query and keeps the result in device memory; this
client maps those buffers into its own process through CUDA IPC, so CuPy and PyTorch work on
them where they are, with no copy through the host. The server holds the memory under a lease
until the result is closed (or the lease expires): arrays taken from a result must not be used
after it is closed.

    import gpudf_client
    with gpudf_client.connect("grpc://localhost:8815") as conn:
        with conn.export("SELECT l_extendedprice, l_discount FROM lineitem") as result:
            price = result["l_extendedprice"].to_cupy()      # a view, no copy
            t = torch.from_dlpack(result["l_discount"])      # DLPack, no copy

Needs pyarrow (Flight) and CuPy; PyTorch only for DLPack consumers.
"""

import base64
import json

import cupy
import numpy
import pyarrow
import pyarrow.flight as flight
import pyarrow.ipc

__all__ = ["connect", "Connection", "Result", "Column", "EXPORT", "RELEASE"]

EXPORT = "gpudf.export_device"
RELEASE = "gpudf.release"

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

    def release(self, lease):
        """Ends ``lease`` on the server (``Result.close`` does this)."""
        list(self._client.do_action(flight.Action(RELEASE, lease.encode()), self._options))

    def close(self):
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
