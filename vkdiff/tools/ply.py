"""API layer: ``ti.tools.PLYWriter`` (Taichi's ``taichi.tools.np2ply``): numpy arrays of vertex
and face attributes -> PLY files, binary (the machine's byte order) or ASCII, one file or a
numbered series (``name_000012.ply``)."""
import sys

import numpy as np

from ..errors import VkdiffValueError

PLY_TYPES = {'char': np.int8, 'uchar': np.uint8, 'short': np.int16, 'ushort': np.uint16,
             'int': np.int32, 'uint': np.uint32, 'float': np.float32, 'double': np.float64}


class PLYWriter:
    """Collects per-vertex and per-face channels, then writes them as a PLY file.

    Args: num_vertices (> 0), num_faces (>= 0), face_type ('tri' or 'quad'), comment."""

    def __init__(self, num_vertices: int, num_faces=0, face_type="tri",
                 comment="created by PLYWriter"):
        if num_vertices <= 0:
            raise VkdiffValueError("num_vertices should be greater than 0")
        if num_faces < 0:
            raise VkdiffValueError("num_faces shouldn't be less than 0")
        if face_type not in ("tri", "quad"):
            raise VkdiffValueError("Only tri and quad faces are supported for now")
        self.num_vertices, self.num_faces = num_vertices, num_faces
        self.face_type, self.comment = face_type, comment
        self.vert_per_face = 3 if face_type == "tri" else 4
        self.face_indices = -np.ones((num_faces, self.vert_per_face), dtype=np.int32)
        self.vertex_channels, self.face_channels = [], []   # [(name, ply type, array)]

    # ------------------------------------------------------------------ channels
    def _add(self, channels, n, what, key, data_type, data):
        # Taichi's messages, printed as Taichi prints them (a program's output stays the same)
        if data_type not in PLY_TYPES:
            print("Unknown type " + data_type + " detected, skipping this channel")
            return
        data = np.asarray(data)
        if data.ndim == 1 and data.size == n:
            cols = [(key, data)]
        elif data.ndim == 2 and data.shape[0] == n:
            cols = [(f"{key}_{i + 1}", data[:, i]) for i in range(data.shape[1])]
        else:
            raise VkdiffValueError(f"PLYWriter: {what} channel {key!r} has shape {data.shape}, "
                                   f"expected ({n},) or ({n}, k)")
        for name, col in cols:
            if any(c[0] == name for c in channels):
                print("WARNING: duplicate key " + name + " detected")
            channels.append((name, data_type, col.astype(PLY_TYPES[data_type])))

    def add_vertex_channel(self, key: str, data_type: str, data):
        self._add(self.vertex_channels, self.num_vertices, 'vertex', key, data_type, data)

    def add_face_channel(self, key: str, data_type: str, data):
        self._add(self.face_channels, self.num_faces, 'face', key, data_type, data)

    def _vertex3(self, names, a, b, c):
        for name, data in zip(names, (a, b, c)):
            self.add_vertex_channel(name, "float", data)

    def add_vertex_pos(self, x, y, z):
        self._vertex3(("x", "y", "z"), x, y, z)

    def add_vertex_normal(self, nx, ny, nz):
        self._vertex3(("nx", "ny", "nz"), nx, ny, nz)

    def add_vertex_vel(self, vx, vy, vz):
        self._vertex3(("vx", "vy", "vz"), vx, vy, vz)

    def add_vertex_color(self, r, g, b):
        self._vertex3(("red", "green", "blue"), r, g, b)

    def add_vertex_alpha(self, alpha):
        self.add_vertex_channel("Alpha", "float", alpha)

    def add_vertex_rgba(self, r, g, b, a):
        self.add_vertex_color(r, g, b)
        self.add_vertex_alpha(a)

    def add_vertex_id(self):
        self.add_vertex_channel("id", "int", np.arange(self.num_vertices))

    def add_vertex_piece(self, piece):
        self.add_vertex_channel("piece", "int", piece)

    def add_faces(self, indices):
        indices = np.asarray(indices)
        if indices.size != self.vert_per_face * self.num_faces:
            raise VkdiffValueError(f"PLYWriter.add_faces: {indices.size} indices for "
                                   f"{self.num_faces} {self.face_type} faces")
        self.face_indices = indices.reshape(self.num_faces, self.vert_per_face).astype(np.int32)

    def add_face_id(self):
        self.add_face_channel("id", "int", np.arange(self.num_faces))

    def add_face_piece(self, piece):
        self.add_face_channel("piece", "int", piece)

    # ------------------------------------------------------------------ output
    def sanity_check(self):
        names = [c[0] for c in self.vertex_channels]
        if not all(k in names for k in "xyz"):
            raise VkdiffValueError("PLYWriter: the vertex positions (add_vertex_pos) are missing")
        bad = (self.face_indices < 0) | (self.face_indices >= self.num_vertices)
        if self.num_faces and bad.any():
            raise VkdiffValueError("PLYWriter: face indices are missing or out of range")

    def _header(self, fmt):
        lines = ["ply", f"format {fmt} 1.0", f"comment {self.comment}",
                 f"element vertex {self.num_vertices}"]
        lines += [f"property {t} {n}" for n, t, _ in self.vertex_channels]
        if self.num_faces:
            lines += [f"element face {self.num_faces}", "property list uchar int vertex_indices"]
            lines += [f"property {t} {n}" for n, t, _ in self.face_channels]
        return "\n".join(lines + ["end_header"]) + "\n"

    def _records(self):
        """(vertex records, face records) as numpy structured arrays."""
        vert = np.zeros(self.num_vertices, [(n, PLY_TYPES[t]) for n, t, _ in self.vertex_channels])
        for n, _, d in self.vertex_channels:
            vert[n] = d
        fdt = [("count", np.uint8), ("idx", np.int32, (self.vert_per_face,))]
        face = np.zeros(self.num_faces, fdt + [(n, PLY_TYPES[t]) for n, t, _ in self.face_channels])
        face["count"], face["idx"] = self.vert_per_face, self.face_indices
        for n, _, d in self.face_channels:
            face[n] = d
        return vert, face

    def export(self, path):
        """Write a binary PLY file."""
        self.sanity_check()
        vert, face = self._records()
        with open(path, "wb") as f:
            f.write(self._header(f"binary_{sys.byteorder}_endian").encode())
            f.write(vert.tobytes())
            if self.num_faces:
                f.write(face.tobytes())

    def export_ascii(self, path):
        """Write an ASCII PLY file."""
        self.sanity_check()
        with open(path, "w") as f:
            f.write(self._header("ascii"))
            # each value followed by a space, as Taichi writes them (the same bytes)
            for i in range(self.num_vertices):
                f.write("".join(str(d[i]) + " " for _, _, d in self.vertex_channels) + "\n")
            for i in range(self.num_faces):
                row = [str(self.vert_per_face)] + [str(x) for x in self.face_indices[i]]
                f.write("".join(x + " " for x in row + [str(d[i]) for _, _, d in
                                                        self.face_channels]) + "\n")

    @staticmethod
    def _series(path, k):
        return (path[:-4] if path.endswith(".ply") else path) + f"_{k:06d}.ply"

    def export_frame(self, series_num: int, path: str):
        self.export(self._series(path, series_num))

    def export_frame_ascii(self, series_num: int, path: str):
        self.export_ascii(self._series(path, series_num))
