"""Stream, event and graph wrappers (CUDA runtime API)."""

from typing import ClassVar

from pydantic import Field

from .base import CudaCall
from .enums import StreamCaptureMode
from .fields import Enum, Handle, Out, Ptr, U64, UInt


class CudaStreamCreate(CudaCall):
    symbol: ClassVar[str] = "_cudaStreamCreate"
    prototype: ClassVar[str] = "cudaError_t cudaStreamCreate(cudaStream_t *pStream)"
    pStream: Out("handle") = Field(description="receives the new (blocking) stream")


class CudaStreamDestroy(CudaCall):
    symbol: ClassVar[str] = "_cudaStreamDestroy"
    prototype: ClassVar[str] = "cudaError_t cudaStreamDestroy(cudaStream_t stream)"
    stream: Handle = Field(description="stream to destroy")


class CudaStreamSynchronize(CudaCall):
    symbol: ClassVar[str] = "_cudaStreamSynchronize"
    prototype: ClassVar[str] = "cudaError_t cudaStreamSynchronize(cudaStream_t stream)"
    stream: Handle = Field(description="stream to wait for")


class CudaStreamWaitEvent(CudaCall):
    """`_cudaStreamWaitEvent` takes two arguments, not three.

    The wrapper is `xor edx, edx; jmp cudaStreamWaitEvent`: it always passes flags = 0
    (cudaEventWaitDefault), so whatever a caller leaves in the third register is ignored.
    """

    symbol: ClassVar[str] = "_cudaStreamWaitEvent"
    prototype: ClassVar[str] = "cudaError_t _cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event)"
    public_prototype: ClassVar[str] = "cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)"
    stream: Handle = Field(description="stream that waits")
    event: Handle = Field(description="event to wait on (flags are fixed to 0 by the wrapper)")


class CudaStreamAddCallback(CudaCall):
    symbol: ClassVar[str] = "_cudaStreamAddCallback"
    prototype: ClassVar[str] = ("cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, "
                                "void *userData, unsigned int flags)")
    stream: Handle = Field(description="stream to add the callback to")
    callback: Ptr = Field(description="host function void (*)(cudaStream_t, cudaError_t, void *userData)")
    userData: Ptr = Field(description="user data passed to the callback")
    flags: UInt = Field(description="reserved, must be 0")


class CudaStreamBeginCapture(CudaCall):
    symbol: ClassVar[str] = "_cudaStreamBeginCapture"
    prototype: ClassVar[str] = "cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode)"
    stream: Handle = Field(description="stream to capture")
    mode: Enum(StreamCaptureMode) = Field(description="cudaStreamCaptureMode")


class CudaStreamEndCapture(CudaCall):
    symbol: ClassVar[str] = "_cudaStreamEndCapture"
    prototype: ClassVar[str] = "cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)"
    stream: Handle = Field(description="stream being captured")
    pGraph: Out("handle") = Field(description="receives the captured graph")


class CudaEventCreate(CudaCall):
    symbol: ClassVar[str] = "_cudaEventCreate"
    prototype: ClassVar[str] = "cudaError_t cudaEventCreate(cudaEvent_t *event)"
    event: Out("handle") = Field(description="receives the new event (default flags)")


class CudaEventRecord(CudaCall):
    symbol: ClassVar[str] = "_cudaEventRecord"
    prototype: ClassVar[str] = "cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)"
    event: Handle = Field(description="event to record")
    stream: Handle = Field(description="stream to record it in (0: default stream)")


class CudaEventDestroy(CudaCall):
    symbol: ClassVar[str] = "_cudaEventDestroy"
    prototype: ClassVar[str] = "cudaError_t cudaEventDestroy(cudaEvent_t event)"
    event: Handle = Field(description="event to destroy")


class CudaEventElapsedTime(CudaCall):
    """`ms` is a float *: the callee writes an IEEE-754 single, modeled as its 32 bits (0 reads as 0.0)."""

    symbol: ClassVar[str] = "_cudaEventElapsedTime"
    prototype: ClassVar[str] = "cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)"
    ms: Out("u32") = Field(description="receives the elapsed milliseconds as a float (its 32-bit pattern)")
    start: Handle = Field(description="starting event")
    end: Handle = Field(description="ending event")


class CudaGraphInstantiate(CudaCall):
    symbol: ClassVar[str] = "_cudaGraphInstantiate"
    prototype: ClassVar[str] = "cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)"
    pGraphExec: Out("handle") = Field(description="receives the executable graph")
    graph: Handle = Field(description="graph to instantiate")
    flags: U64 = Field(description="cudaGraphInstantiateFlags bits (see enums.GraphInstantiateFlags)")


class CudaGraphLaunch(CudaCall):
    symbol: ClassVar[str] = "_cudaGraphLaunch"
    prototype: ClassVar[str] = "cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)"
    graphExec: Handle = Field(description="executable graph")
    stream: Handle = Field(description="stream to launch it in")


class CudaGraphDestroy(CudaCall):
    symbol: ClassVar[str] = "_cudaGraphDestroy"
    prototype: ClassVar[str] = "cudaError_t cudaGraphDestroy(cudaGraph_t graph)"
    graph: Handle = Field(description="graph to destroy")


class CudaGraphExecDestroy(CudaCall):
    symbol: ClassVar[str] = "_cudaGraphExecDestroy"
    prototype: ClassVar[str] = "cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)"
    graphExec: Handle = Field(description="executable graph to destroy")
