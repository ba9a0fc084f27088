// Prepared models: the kernels' data computed on a host (`tflm-host
// prepare`, by this engine's own prepare() code) and stored in the model's
// metadata, so that the device reads it in place from the model's buffer
// (flash, when the model is in ROMFS) instead of keeping a copy in the
// arena's tail. Only what changes at run time stays in the tail.
//
// Nothing in it is trusted: the device runs every kernel's prepare() as it
// would without the data, into temporary memory, and requires the stored
// bytes to be equal (a ValueError otherwise). The data therefore saves arena
// bytes, not prepare() time, and corrupt or stale data can never reach a
// kernel's eval().
//
// The interpreter's index lists (each subgraph's and each operator's
// inputs then outputs, as global tensor indices) are stored too, in the
// form the tail would hold them, and checked entry by entry as the build
// derives them from the model: they then take no arena bytes either.
//
// So are the records of the constant tensors (records.h): a constant's
// record never changes, so it stays in the model, and the arena keeps
// records for the other tensors only. The index lists then hold record
// indices of that layout, and a map gives each model tensor's record; the
// build derives both from the model and requires them equal too.
//
// And, when no operator keeps run-time state in the tail, the subgraph and
// node records: nothing in them depends on the build (kernels by id, the
// lists' and the data's offsets from the buffer's start, the patch stage
// outside them), so the build derives each one and requires it equal to the
// model's, and the tail holds none.
//
// Format (metadata "TflmPreparedData", little-endian int32 words): magic
// "TFPD", version, operator count (all subgraphs, in order), the offsets of
// the index lists and of the records from the start of the buffer, the
// number of constant tensors; then per operator its data's offset and its
// bytes (0, 0 when it keeps its data in the tail); then the data, each at a
// multiple of 8; then the index lists: uint16 entries, every subgraph's list
// then every operator's in order, each starting at a multiple of 4 (0xffff
// for an omitted input); then the records: a uint16 record index per model
// tensor (all subgraphs, in order), and at the next multiple of 8 the
// constants' records (tflm_tensor_rec_t); then, at the offset the header's
// seventh word gives (0: none) up to the end of the buffer, the subgraph
// records (tflm_subgraph_rec_t) and the node records (tflm_node_rec_t), their
// `io` and a node's data in the model offsets from the buffer's start.
#ifndef TFLM_ENGINE_PREPARED_H
#define TFLM_ENGINE_PREPARED_H

#include "model.h"
#include "records.h"

#define TFLM_PREPARED_METADATA "TflmPreparedData"
#define TFLM_PREPARED_MAGIC (0x44504654u) // "TFPD"
// 2: fully connected data holds its folded starting sums; 3: index lists;
// 4: constants' records; 5: subgraph and node records; 6: CONV_2D int8 data
// holds its folded starting sums; 7: 8-byte tensor records (bytes, type and
// where in one word); 8: CONV_2D int8 data's lanes in two bits (whether the
// output stages fit SMMLAR, kernels/conv_common.h).
#define TFLM_PREPARED_VERSION (8)
#define TFLM_PREPARED_HEADER_WORDS (7)
// Alignment of each operator's data inside the buffer (and of the buffer in memory).
#define TFLM_PREPARED_ALIGN (8)

typedef struct {
    uint32_t pos;     // model offset of the metadata buffer, 0: none
    uint32_t len;
    uint32_t n_nodes;
    uint32_t lists_at; // model offsets of the index lists and of their end
    uint32_t lists_end;
    uint32_t recs_at;  // model offsets of the records map and of the constants' records
    uint32_t consts_at;
    uint32_t n_const;
    uint32_t nodes_at; // model offset of the subgraph records, then the node records; 0: none
} tflm_prepared_t;

// Finds and checks the header against a model of n_subgraphs subgraphs,
// n_nodes operators and n_tensors tensors (all subgraphs); pos is 0 when
// the model has no prepared data. ValueError when it is malformed.
tflm_status_t tflm_prepared_find(tflm_model_t *m, uint32_t n_subgraphs, uint32_t n_nodes, uint32_t n_tensors,
    tflm_prepared_t *pd, tflm_error_t *err);

// Operator `node`'s data: its model offset and bytes (0 when it has none).
// Reads the model again, so a buffer changed since tflm_prepared_find()
// gives a ValueError, never a read out of bounds.
tflm_status_t tflm_prepared_entry(tflm_model_t *m, const tflm_prepared_t *pd, uint32_t node, uint32_t *at,
    uint32_t *bytes, tflm_error_t *err);

// Writing the format: the host's `tflm-host prepare` (tflm_host._engine)
// and the engine's fuzzer give the parts a build exported (tflm_config_t's
// kernel_data and index_list callbacks, tflm_interp_measure()), and these
// lay them out; nothing else writes the layout. Firmware never calls them.
typedef struct {
    uint32_t n_nodes;
    const uint8_t *const *data;  // per operator, NULL (or 0 bytes): its data stays in the tail
    const uint32_t *data_bytes;
    const uint8_t *lists;        // the index lists, each as tflm_prepared_put_list() stores it
    uint32_t lists_bytes;
    const uint8_t *map;          // a little-endian uint16 record index per model tensor
    uint32_t map_bytes;
    const uint8_t *consts;       // the constants' records (tflm_tensor_rec_t)
    uint32_t consts_bytes;
    // The subgraph records, then the node records, as a build laid them out
    // (their `io` and data offsets are the writer's to set), or 0 bytes:
    // the device keeps them in the tail.
    const uint8_t *records;
    uint32_t records_bytes;
} tflm_prepared_parts_t;

// The subgraph and node records of a model measured for the export
// (tflm_interp_measure() with kernel_data, `measured`, in `work` of
// work_len bytes), as tflm_prepared_parts_t.records takes them, copied to
// `out` unless NULL: their bytes, 0 when they stay in the tail (a kernel
// keeps run-time state there).
struct _tflm_interp_t;
uint32_t tflm_prepared_records(const struct _tflm_interp_t *measured, void *work, size_t work_len, uint8_t *out);

// Bytes of the metadata buffer the parts make; 0 when they cannot make one
// (over 2 GiB, or a part of a size the format cannot hold).
uint32_t tflm_prepared_size(const tflm_prepared_parts_t *parts);
// Writes it into `out`, tflm_prepared_size() bytes.
void tflm_prepared_write(const tflm_prepared_parts_t *parts, uint8_t *out);
// An index list of n entries as the buffer stores it, written at `out`
// unless NULL; returns its bytes (uint16 entries, padded to 4 bytes).
uint32_t tflm_prepared_put_list(uint8_t *out, const uint16_t *list, uint32_t n);

// A model edited so that the bytes before its old ones grew by `shift`
// (tflm_host.fbedit): the constants' records in its prepared data `p` (len
// bytes; the model has n_tensors tensors) hold model offsets of their
// bytes, which move with them. false, nothing changed, when the buffer is
// not laid out as this engine's (the device then refuses it).
bool tflm_prepared_shift_consts(uint8_t *p, uint32_t len, uint32_t n_tensors, uint32_t shift);

#endif // TFLM_ENGINE_PREPARED_H
