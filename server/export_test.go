package server

// DecodeReads makes s answer every read by decoding what is stored, and
// encode every watch event for each watcher, as it did before it sent
// stored objects as they are: tests compare the two.
func DecodeReads(s *Server) { s.decodeReads = true }
