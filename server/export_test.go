package server

// DecodeReads makes s answer every read by decoding what is stored, as it
// did before it sent stored objects as they are: tests compare the two.
func DecodeReads(s *Server) { s.decodeReads = true }
