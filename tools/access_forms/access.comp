// Microbenchmark shader (tools/access_forms/run.py): K loads, NS stores or NA atomic adds per
// invocation through one access form. L: load form (0 storage buffer, 1 buffer device address,
// 2 storage texel buffer r32f, 3 uniform texel buffer, 4 rg32f texel, 5 vec2 storage buffer,
// 6 vec2 as one 64-bit storage-buffer word, 7 rgba32f texel); S: store / atomic form (0 storage
// buffer, 1 buffer device address, 2 storage texel buffer). PAT 0: index g + k*n/8
// (contiguous across the subgroup), 1: a hash of (g, k) (scattered).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x=WG) in;
layout(buffer_reference, std430, buffer_reference_align=4) buffer FP { float v[]; };
layout(buffer_reference, std430, buffer_reference_align=4) buffer UP { uint v[]; };
layout(push_constant) uniform P { FP pa; FP pb; uint n; };
#if L==0
layout(set=0,binding=0) readonly buffer A_ { float a[]; };
#define LD(i) a[i]
#elif L==1
#define LD(i) pa.v[i]
#elif L==2
layout(set=0,binding=0,r32f) uniform readonly imageBuffer a;
#define LD(i) imageLoad(a,int(i)).x
#elif L==4
layout(set=0,binding=0,rg32f) uniform readonly imageBuffer a;
#define LD(i) dot(imageLoad(a,int(i)).xy,vec2(1.0))
#elif L==5
layout(set=0,binding=0) readonly buffer A_ { vec2 a[]; };
#define LD(i) dot(a[i],vec2(1.0))
#elif L==6
layout(set=0,binding=0) readonly buffer A_ { uint64_t a[]; };
#define LD(i) dot(uintBitsToFloat(unpackUint2x32(a[i])) ,vec2(1.0))
#elif L==7
layout(set=0,binding=0,rgba32f) uniform readonly imageBuffer a;
#define LD(i) dot(imageLoad(a,int(i)),vec4(1.0))
#elif L==3
layout(set=0,binding=0) uniform samplerBuffer a;
#define LD(i) texelFetch(a,int(i)).x
#endif
#if S==0
layout(set=0,binding=1) buffer B_ { float b[]; };
layout(set=0,binding=1) buffer BU_ { uint bu[]; };
#define ST(i,x) b[i]=x
#define AT(i) atomicAdd(bu[i],1u)
#elif S==1
#define ST(i,x) pb.v[i]=x
#define AT(i) atomicAdd(UP(pb).v[i],1u)
#elif S==2
layout(set=0,binding=1,r32f) uniform writeonly imageBuffer b;
layout(set=0,binding=1,r32ui) uniform uimageBuffer bu;
#define ST(i,x) imageStore(b,int(i),vec4(x))
#define AT(i) imageAtomicAdd(bu,int(i),1u)
#endif
uint ix(uint g, uint k) {
#if PAT==0
  return (g + k*(n/8u)) & (n-1u);
#else
  return ((g*2654435761u) ^ (k*40503u)) & (n-1u);
#endif
}
void main(){
  uint g = gl_GlobalInvocationID.x;
  float s = 0.0;
  for (uint k=0u;k<uint(K);k++) s += LD(ix(g,k));
#if NS>0
  for (uint k=0u;k<uint(NS);k++) ST(ix(g,k+3u), s+float(k));
#endif
#if NA>0
  for (uint k=0u;k<uint(NA);k++) AT(ix(g,k+5u));
#endif
  ST(g, s);
}
